package common

// InstanceConfig is [runners.instance] (instance executor).
type InstanceConfig struct {
	AllowedImages     []string `toml:"allowed_images"`
	UseCommonBuildDir bool     `toml:"use_common_build_dir"`
}

// SshConfig is [runners.ssh] (ssh executor, and the ssh connection of the
// virtualbox and parallels executors).
type SshConfig struct {
	User                         string `toml:"user"`
	Password                     string `toml:"password"`
	Host                         string `toml:"host"`
	Port                         string `toml:"port"`
	IdentityFile                 string `toml:"identity_file"`
	DisableStrictHostKeyChecking *bool  `toml:"disable_strict_host_key_checking"`
	KnownHostsFile               string `toml:"known_hosts_file"`
}

// ParallelsConfig is [runners.parallels].
type ParallelsConfig struct {
	BaseName         string   `toml:"base_name"`
	TemplateName     string   `toml:"template_name"`
	DisableSnapshots bool     `toml:"disable_snapshots"`
	TimeServer       string   `toml:"time_server"`
	AllowedImages    []string `toml:"allowed_images"`
}

// VirtualBoxConfig is [runners.virtualbox].
type VirtualBoxConfig struct {
	BaseName         string   `toml:"base_name"`
	BaseSnapshot     string   `toml:"base_snapshot"`
	BaseFolder       string   `toml:"base_folder"`
	DisableSnapshots bool     `toml:"disable_snapshots"`
	AllowedImages    []string `toml:"allowed_images"`
	StartType        string   `toml:"start_type"`
}

// CustomConfig is [runners.custom]. The *_timeout keys are integers (seconds).
type CustomConfig struct {
	ConfigExec          string   `toml:"config_exec"`
	ConfigArgs          []string `toml:"config_args"`
	ConfigExecTimeout   *int     `toml:"config_exec_timeout"` // seconds
	PrepareExec         string   `toml:"prepare_exec"`
	PrepareArgs         []string `toml:"prepare_args"`
	PrepareExecTimeout  *int     `toml:"prepare_exec_timeout"` // seconds
	RunExec             string   `toml:"run_exec"`
	RunArgs             []string `toml:"run_args"`
	CleanupExec         string   `toml:"cleanup_exec"`
	CleanupArgs         []string `toml:"cleanup_args"`
	CleanupExecTimeout  *int     `toml:"cleanup_exec_timeout"`  // seconds
	GracefulKillTimeout *int     `toml:"graceful_kill_timeout"` // seconds
	ForceKillTimeout    *int     `toml:"force_kill_timeout"`    // seconds
}

// DockerMachine is [runners.machine] (docker+machine). Its keys are CamelCase
// (IdleCount, MachineDriver, ...): several have no toml tag in the runner, so
// the key is the Go field name, matched case-insensitively.
type DockerMachine struct {
	MaxGrowthRate          int                         `toml:"MaxGrowthRate"`
	IdleCount              int                         `toml:"IdleCount"`
	IdleScaleFactor        float64                     `toml:"IdleScaleFactor"`
	IdleCountMin           int                         `toml:"IdleCountMin"`
	IdleTime               int                         `toml:"IdleTime"`
	MaxBuilds              int                         `toml:"MaxBuilds"`
	MachineDriver          string                      `toml:"MachineDriver"`
	MachineName            string                      `toml:"MachineName"`
	MachineOptions         []string                    `toml:"MachineOptions"`
	MachineOptionsWithName []string                    `toml:"MachineOptionsWithName"`
	MaxRemovalAttempts     int                         `toml:"MaxRemovalAttempts"`
	OffPeakPeriods         []string                    `toml:"OffPeakPeriods"`
	OffPeakTimezone        string                      `toml:"OffPeakTimezone"`
	OffPeakIdleCount       int                         `toml:"OffPeakIdleCount"`
	OffPeakIdleTime        int                         `toml:"OffPeakIdleTime"`
	AutoscalingConfigs     []*DockerMachineAutoscaling `toml:"autoscaling"`
}

// DockerMachineAutoscaling is one [[runners.machine.autoscaling]] element
// (CamelCase keys, see DockerMachine).
type DockerMachineAutoscaling struct {
	Periods         []string `toml:"Periods"`
	Timezone        string   `toml:"Timezone"`
	IdleCount       int      `toml:"IdleCount"`
	IdleScaleFactor float64  `toml:"IdleScaleFactor"`
	IdleCountMin    int      `toml:"IdleCountMin"`
	IdleTime        int      `toml:"IdleTime"`
}
