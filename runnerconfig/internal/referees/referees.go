// Package referees holds the types of [runners.referees]. It is named
// referees so that TOML type-mismatch errors name its types exactly as
// gitlab-runner does ("referees.Config").
package referees

// Config is [runners.referees].
type Config struct {
	Metrics *MetricsRefereeConfig `toml:"metrics"`
}

// MetricsRefereeConfig is [runners.referees.metrics].
type MetricsRefereeConfig struct {
	PrometheusAddress string   `toml:"prometheus_address"`
	QueryInterval     int      `toml:"query_interval"` // seconds
	Queries           []string `toml:"queries"`
}
