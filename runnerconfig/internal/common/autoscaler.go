package common

import (
	"time"
)

// AutoscalerConfig is [runners.autoscaler]: the fleeting (taskscaler)
// autoscaler of the instance and docker-autoscaler executors. plugin_config is
// an untyped table handed to the plugin as JSON: its direct keys count as
// decoded, but keys of tables nested inside it do not (BurntSushi/toml only
// marks one level when it stores a value into an interface).
type AutoscalerConfig struct {
	CapacityPerInstance          int                      `toml:"capacity_per_instance"`
	MaxUseCount                  int                      `toml:"max_use_count"`
	MaxInstances                 int                      `toml:"max_instances"`
	Plugin                       string                   `toml:"plugin"`
	PluginConfig                 map[string]any           `toml:"plugin_config"`
	ConnectorConfig              ConnectorConfig          `toml:"connector_config"`
	Policy                       []AutoscalerPolicyConfig `toml:"policy"`
	InstanceReadyCommand         string                   `toml:"instance_ready_command"`
	InstanceAcquireTimeout       time.Duration            `toml:"instance_acquire_timeout"`
	UpdateInterval               time.Duration            `toml:"update_interval"`
	UpdateIntervalWhenExpecting  time.Duration            `toml:"update_interval_when_expecting"`
	DeletionRetryInterval        time.Duration            `toml:"deletion_retry_interval"`
	ShutdownDeletionInterval     time.Duration            `toml:"shutdown_deletion_interval"`
	ShutdownDeletionRetries      int                      `toml:"shutdown_deletion_retries"`
	FailureThreshold             int                      `toml:"failure_threshold"`
	ScaleThrottle                AutoscalerScaleThrottle  `toml:"scale_throttle"`
	ReservationThrottling        *bool                    `toml:"reservation_throttling"`
	LogInternalIP                bool                     `toml:"log_internal_ip"`
	LogExternalIP                bool                     `toml:"log_external_ip"`
	DeleteInstancesOnShutdown    bool                     `toml:"delete_instances_on_shutdown"`
	VMIsolation                  VMIsolation              `toml:"vm_isolation"`
	StateStorage                 AutoscalerStateStorage   `toml:"state_storage"`
	InstanceOperationTimeBuckets []float64                `toml:"instance_operation_time_buckets"`
	InstanceCreationTimeBuckets  []float64                `toml:"instance_creation_time_buckets"`
	InstanceIsRunningTimeBuckets []float64                `toml:"instance_is_running_time_buckets"`
	InstanceDeletionTimeBuckets  []float64                `toml:"instance_deletion_time_buckets"`
	InstanceReadinessTimeBuckets []float64                `toml:"instance_readiness_time_buckets"`
	InstanceLifeDurationBuckets  []float64                `toml:"instance_life_duration_buckets"`
}

// ConnectorConfig is [runners.autoscaler.connector_config] (and
// [runners.autoscaler.vm_isolation.connector_config]).
type ConnectorConfig struct {
	OS                   string        `toml:"os"`
	Arch                 string        `toml:"arch"`
	Protocol             string        `toml:"protocol"`
	ProtocolPort         int           `toml:"protocol_port"`
	Username             string        `toml:"username"`
	Password             string        `toml:"password"`
	KeyPathname          string        `toml:"key_path"`
	UseStaticCredentials bool          `toml:"use_static_credentials"`
	Keepalive            time.Duration `toml:"keepalive"`
	Timeout              time.Duration `toml:"timeout"`
	UseExternalAddr      bool          `toml:"use_external_addr"`
}

// AutoscalerPolicyConfig is one [[runners.autoscaler.policy]] or
// [[runners.kubernetes.autoscaler.policy]] element. idle_time is a duration
// ("20m", or an integer of nanoseconds).
type AutoscalerPolicyConfig struct {
	Periods          []string      `toml:"periods"`
	Timezone         string        `toml:"timezone"`
	IdleCount        int           `toml:"idle_count"`
	IdleTime         time.Duration `toml:"idle_time"`
	ScaleFactor      float64       `toml:"scale_factor"`
	ScaleFactorLimit int           `toml:"scale_factor_limit"`
	PreemptiveMode   *bool         `toml:"preemptive_mode"`
}

// AutoscalerScaleThrottle is [runners.autoscaler.scale_throttle].
type AutoscalerScaleThrottle struct {
	Limit int `toml:"limit"`
	Burst int `toml:"burst"`
}

// VMIsolation is [runners.autoscaler.vm_isolation] (nesting).
type VMIsolation struct {
	Enabled         bool            `toml:"enabled"`
	NestingHost     string          `toml:"nesting_host"`
	NestingConfig   map[string]any  `toml:"nesting_config"`
	Image           string          `toml:"image"`
	ConnectorConfig ConnectorConfig `toml:"connector_config"`
}

// AutoscalerStateStorage is [runners.autoscaler.state_storage].
type AutoscalerStateStorage struct {
	Enabled                      bool   `toml:"enabled"`
	Dir                          string `toml:"dir"`
	KeepInstanceWithAcquisitions bool   `toml:"keep_instance_with_acquisitions"`
}
