// Trimmed copy of gitlab-runner v19.4.0 (branch main at commit
// d79f3e7b89abceace75e2425bfe92b84ea059933, whose VERSION file says 19.4.0;
// the mirror has no v19.4 tag yet), made by internal/source/runnerversion/keygen:
// only the package clause, the imports and, byte for byte, the declarations
// the config.toml key walk reads. Copyright (c) 2015-2019 GitLab Inc., MIT
// License; the full text is in runnerconfig/testdata/src/LICENSE.

package referees

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	prometheusV1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/sirupsen/logrus"
)

type MetricsRefereeConfig struct {
	PrometheusAddress string   `toml:"prometheus_address,omitempty" json:"prometheus_address" description:"A host:port to a prometheus metrics server"`
	QueryInterval     int      `toml:"query_interval,omitempty" json:"query_interval" description:"Query interval (in seconds)"`
	Queries           []string `toml:"queries" json:"queries" description:"A list of metrics to query (in PromQL)"`
}
