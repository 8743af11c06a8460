// Trimmed copy of gitlab-runner v19.2.1 (tag commit
// a470182f2a48e0e03ed11c3c4a2026b6597ecd26), made by
// internal/source/runnerversion/keygen: only the package clause, the imports and,
// byte for byte, the declarations the config.toml key walk reads. Copyright
// (c) 2015-2019 GitLab Inc., MIT License; the full text is in
// runnerconfig/testdata/src/LICENSE.

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
