// Trimmed copy of gitlab-runner v19.3.0 (tag commit
// 9cbf0074ddb0e2f79d79f44406cafebf09117b64), made by
// internal/source/runnerversion/keygen: only the package clause, the imports and,
// byte for byte, the declarations the config.toml key walk reads. Copyright
// (c) 2015-2019 GitLab Inc., MIT License; the full text is in
// runnerconfig/testdata/src/LICENSE.

package referees

import (
	"bytes"
	"context"
	"time"

	"github.com/sirupsen/logrus"
)

type Config struct {
	Metrics *MetricsRefereeConfig `toml:"metrics,omitempty" json:"metrics" namespace:"metrics"`
}
