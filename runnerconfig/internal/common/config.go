package common

import (
	"time"
)

// Config is the whole of config.toml (the top-level table).
type Config struct {
	ListenAddress    string            `toml:"listen_address"`
	SessionServer    SessionServer     `toml:"session_server"`
	Labels           map[string]string `toml:"labels"`
	Concurrent       int               `toml:"concurrent"`     // jobs in flight across all runners
	CheckInterval    int               `toml:"check_interval"` // seconds
	LogLevel         *string           `toml:"log_level"`
	LogFormat        *string           `toml:"log_format"`
	User             string            `toml:"user"`
	Runners          []*RunnerConfig   `toml:"runners"`
	SentryDSN        *string           `toml:"sentry_dsn"`
	ConnectionMaxAge *time.Duration    `toml:"connection_max_age"` // duration string; the runner defaults to 15m
	Machine          *MachineConfig    `toml:"machine"`
	Experimental     *Experimental     `toml:"experimental"`
	ShutdownTimeout  int               `toml:"shutdown_timeout"` // seconds
}

// SessionServer is [session_server].
type SessionServer struct {
	ListenAddress    string `toml:"listen_address"`
	AdvertiseAddress string `toml:"advertise_address"`
	SessionTimeout   int    `toml:"session_timeout"` // seconds
}

// MachineConfig is the top-level [machine] table.
type MachineConfig struct {
	ShutdownDrain *DockerMachineShutdownDrain `toml:"shutdown_drain"`
}

// DockerMachineShutdownDrain is [machine.shutdown_drain].
type DockerMachineShutdownDrain struct {
	Enabled      bool          `toml:"enabled"`
	Concurrency  int           `toml:"concurrency"`
	MaxRetries   int           `toml:"max_retries"`
	RetryBackoff time.Duration `toml:"retry_backoff"`
}

// Experimental is the top-level [experimental] table.
type Experimental struct {
	UsageLogger UsageLogger `toml:"usage_logger"`
}

// UsageLogger is [experimental.usage_logger].
type UsageLogger struct {
	Enabled        bool              `toml:"enabled"`
	Writers        []string          `toml:"writers"`
	Logrotate      LogrotateConfig   `toml:"logrotate"`
	Snowplow       SnowplowConfig    `toml:"snowplow_billing"`
	LogDir         string            `toml:"log_dir"`
	MaxBackupFiles *int64            `toml:"max_backup_files"`
	MaxRotationAge *time.Duration    `toml:"max_rotation_age"`
	Labels         map[string]string `toml:"labels"`
}

// LogrotateConfig is [experimental.usage_logger.logrotate].
type LogrotateConfig struct {
	LogDir         string            `toml:"log_dir"`
	MaxBackupFiles *int64            `toml:"max_backup_files"`
	MaxRotationAge *time.Duration    `toml:"max_rotation_age"`
	Labels         map[string]string `toml:"labels"`
}

// SnowplowConfig is [experimental.usage_logger.snowplow_billing].
type SnowplowConfig struct {
	CollectorURI                 string            `toml:"collector_uri"`
	AppID                        string            `toml:"app_id"`
	Category                     string            `toml:"category"`
	Realm                        string            `toml:"realm"`
	DeploymentType               string            `toml:"deployment_type"`
	Metadata                     map[string]string `toml:"metadata"`
	EnableOIDC                   bool              `toml:"enable_oidc"`
	BatchDeliveryDurationBuckets []float64         `toml:"batch_delivery_duration_buckets"`
	SkipOIDCIfUnsupportedCloud   *bool             `toml:"skip_oidc_if_unsupported_cloud"`
	SkipRunnerSystemFailure      *bool             `toml:"skip_runner_system_failure"`
}
