package common

import (
	"github.com/socialwebcomputer/doctor/runnerconfig/internal/cacheconfig"
	"github.com/socialwebcomputer/doctor/runnerconfig/internal/referees"
	"github.com/socialwebcomputer/doctor/runnerconfig/internal/runner"
	"time"
)

// RunnerConfig is one [[runners]] element. In gitlab-runner it embeds a
// credentials struct (url, id, token, token_*_at, tls-*-file) and a settings
// struct (everything from labels on); both are flattened here, which decodes
// identically because no key name collides.
//
// run_untagged, tag_list, locked, access_level and the like are registration
// flags, not fields: in config.toml the runner ignores them (they show up in
// MetaData.Undecoded).
type RunnerConfig struct {
	Name                           string              `toml:"name"`
	Limit                          int                 `toml:"limit"`               // concurrent jobs of this runner, 0 = no limit
	OutputLimit                    int                 `toml:"output_limit"`        // KiB of job log; the runner defaults to 4096
	RequestConcurrency             int                 `toml:"request_concurrency"` // concurrent job requests
	StrictCheckInterval            *bool               `toml:"strict_check_interval"`
	UnhealthyRequestsLimit         int                 `toml:"unhealthy_requests_limit"`
	UnhealthyInterval              *time.Duration      `toml:"unhealthy_interval"` // duration string
	JobStatusFinalUpdateRetryLimit int                 `toml:"job_status_final_update_retry_limit"`
	Experimental                   *RunnerExperimental `toml:"experimental"`

	// Credentials (flattened).
	URL             string    `toml:"url"`
	ID              int64     `toml:"id"`
	Token           string    `toml:"token"`
	TokenObtainedAt time.Time `toml:"token_obtained_at"`
	TokenExpiresAt  time.Time `toml:"token_expires_at"`
	TLSCAFile       string    `toml:"tls-ca-file"`
	TLSCertFile     string    `toml:"tls-cert-file"`
	TLSKeyFile      string    `toml:"tls-key-file"`

	// Settings (flattened).
	Labels                map[string]string   `toml:"labels"`
	Executor              string              `toml:"executor"`
	BuildsDir             string              `toml:"builds_dir"`
	CacheDir              string              `toml:"cache_dir"`
	CloneURL              string              `toml:"clone_url"`
	Environment           []string            `toml:"environment"` // "NAME=value" entries for the jobs, not the runner process
	ProxyExec             *bool               `toml:"proxy_exec"`
	PreGetSourcesScript   string              `toml:"pre_get_sources_script"`  // a string, not an array
	PostGetSourcesScript  string              `toml:"post_get_sources_script"` // a string
	PreBuildScript        string              `toml:"pre_build_script"`        // a string, not an array
	PostBuildScript       string              `toml:"post_build_script"`       // a string
	PrepareTimeout        *time.Duration      `toml:"prepare_timeout"`         // duration string
	GetSourcesTimeout     *time.Duration      `toml:"get_sources_timeout"`     // duration string
	DebugTraceDisabled    bool                `toml:"debug_trace_disabled"`
	SafeDirectoryCheckout *bool               `toml:"safe_directory_checkout"`
	CleanGitConfig        *bool               `toml:"clean_git_config"`
	Shell                 string              `toml:"shell"`
	CustomBuildDir        CustomBuildDir      `toml:"custom_build_dir"`
	Referees              *referees.Config    `toml:"referees"`
	Cache                 *cacheconfig.Config `toml:"cache"`
	Artifact              ArtifactConfig      `toml:"artifact"`
	FeatureFlags          map[string]bool     `toml:"feature_flags"` // FF_* name -> on/off
	Monitoring            *runner.Monitoring  `toml:"monitoring"`
	UseSlotCgroups        bool                `toml:"use_slot_cgroups"`
	SlotCgroupTemplate    string              `toml:"slot_cgroup_template"`
	Instance              *InstanceConfig     `toml:"instance"`
	SSH                   *SshConfig          `toml:"ssh"`
	Docker                *DockerConfig       `toml:"docker"`
	Parallels             *ParallelsConfig    `toml:"parallels"`
	VirtualBox            *VirtualBoxConfig   `toml:"virtualbox"`
	Machine               *DockerMachine      `toml:"machine"`
	Kubernetes            *KubernetesConfig   `toml:"kubernetes"`
	Custom                *CustomConfig       `toml:"custom"`
	Autoscaler            *AutoscalerConfig   `toml:"autoscaler"`
	StepRunnerImage       string              `toml:"step_runner_image"`
}

// RunnerExperimental is [runners.experimental].
type RunnerExperimental struct {
	BootVerify *BootVerify `toml:"boot_verify"`
}

// BootVerify is [runners.experimental.boot_verify].
type BootVerify struct {
	Enabled           bool          `toml:"enabled"`
	Timeout           time.Duration `toml:"timeout"`
	AcquireMinBackoff time.Duration `toml:"acquire_min_backoff"`
	AcquireMaxBackoff time.Duration `toml:"acquire_max_backoff"`
}

// CustomBuildDir is [runners.custom_build_dir].
type CustomBuildDir struct {
	Enabled *bool `toml:"enabled"`
}

// ArtifactConfig is [runners.artifact].
type ArtifactConfig struct {
	UploadTimeout         *time.Duration `toml:"upload_timeout"`
	ResponseHeaderTimeout *time.Duration `toml:"response_header_timeout"`
}
