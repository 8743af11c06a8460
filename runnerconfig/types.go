package runnerconfig

import (
	"github.com/socialwebcomputer/doctor/runnerconfig/internal/cacheconfig"
	"github.com/socialwebcomputer/doctor/runnerconfig/internal/common"
	"github.com/socialwebcomputer/doctor/runnerconfig/internal/referees"
	"github.com/socialwebcomputer/doctor/runnerconfig/internal/runner"
	"github.com/socialwebcomputer/doctor/runnerconfig/internal/runner/monitoring"
)

// The top level of config.toml.
type (
	// Config is the whole file: concurrent, check_interval, log_level,
	// log_format, listen_address, shutdown_timeout, sentry_dsn,
	// connection_max_age, user, labels, [session_server], [machine],
	// [experimental] and [[runners]].
	Config = common.Config
	// SessionServer is [session_server].
	SessionServer = common.SessionServer
	// MachineConfig is the top-level [machine] table.
	MachineConfig = common.MachineConfig
	// MachineShutdownDrain is [machine.shutdown_drain].
	MachineShutdownDrain = common.DockerMachineShutdownDrain
	// Experimental is the top-level [experimental] table.
	Experimental = common.Experimental
	// UsageLogger is [experimental.usage_logger].
	UsageLogger = common.UsageLogger
	// LogrotateConfig is [experimental.usage_logger.logrotate].
	LogrotateConfig = common.LogrotateConfig
	// SnowplowConfig is [experimental.usage_logger.snowplow_billing].
	SnowplowConfig = common.SnowplowConfig
)

// One [[runners]] element and its executor-independent tables.
type (
	// Runner is one [[runners]] element.
	Runner = common.RunnerConfig
	// RunnerExperimental is [runners.experimental].
	RunnerExperimental = common.RunnerExperimental
	// BootVerify is [runners.experimental.boot_verify].
	BootVerify = common.BootVerify
	// CustomBuildDir is [runners.custom_build_dir].
	CustomBuildDir = common.CustomBuildDir
	// Artifact is [runners.artifact].
	Artifact = common.ArtifactConfig
	// Cache is [runners.cache] (CamelCase keys: Type, Path, Shared, ...).
	Cache = cacheconfig.Config
	// CacheS3 is [runners.cache.s3].
	CacheS3 = cacheconfig.CacheS3Config
	// CacheGCS is [runners.cache.gcs].
	CacheGCS = cacheconfig.CacheGCSConfig
	// CacheAzure is [runners.cache.azure].
	CacheAzure = cacheconfig.CacheAzureConfig
	// Referees is [runners.referees].
	Referees = referees.Config
	// MetricsReferee is [runners.referees.metrics].
	MetricsReferee = referees.MetricsRefereeConfig
	// Monitoring is [runners.monitoring].
	Monitoring = runner.Monitoring
	// JobQueuingDuration is one [[runners.monitoring.job_queuing_durations]].
	JobQueuingDuration = monitoring.JobQueuingDuration
	// StringOrArray is pull_policy: a string or an array of strings.
	StringOrArray = common.StringOrArray
)

// Executors other than docker and kubernetes.
type (
	// Instance is [runners.instance].
	Instance = common.InstanceConfig
	// SSH is [runners.ssh].
	SSH = common.SshConfig
	// Parallels is [runners.parallels].
	Parallels = common.ParallelsConfig
	// VirtualBox is [runners.virtualbox].
	VirtualBox = common.VirtualBoxConfig
	// Custom is [runners.custom].
	Custom = common.CustomConfig
	// Machine is [runners.machine] (docker+machine, CamelCase keys).
	Machine = common.DockerMachine
	// MachineAutoscaling is one [[runners.machine.autoscaling]].
	MachineAutoscaling = common.DockerMachineAutoscaling
)

// The fleeting autoscaler ([runners.autoscaler]) of the instance and
// docker-autoscaler executors.
type (
	// Autoscaler is [runners.autoscaler].
	Autoscaler = common.AutoscalerConfig
	// ConnectorConfig is [runners.autoscaler.connector_config].
	ConnectorConfig = common.ConnectorConfig
	// AutoscalerPolicy is one [[runners.autoscaler.policy]] (also used by
	// [[runners.kubernetes.autoscaler.policy]]).
	AutoscalerPolicy = common.AutoscalerPolicyConfig
	// ScaleThrottle is [runners.autoscaler.scale_throttle].
	ScaleThrottle = common.AutoscalerScaleThrottle
	// VMIsolation is [runners.autoscaler.vm_isolation].
	VMIsolation = common.VMIsolation
	// StateStorage is [runners.autoscaler.state_storage].
	StateStorage = common.AutoscalerStateStorage
)

// The docker executor.
type (
	// Docker is [runners.docker].
	Docker = common.DockerConfig
	// Service is one [[runners.docker.services]] or
	// [[runners.kubernetes.services]].
	Service = common.Service
)

// The kubernetes executor.
type (
	// Kubernetes is [runners.kubernetes].
	Kubernetes = common.KubernetesConfig
	// KubernetesAutoscaler is [runners.kubernetes.autoscaler] (pause pods).
	KubernetesAutoscaler = common.KubernetesAutoscalerConfig
	// Affinity is [runners.kubernetes.affinity].
	Affinity = common.KubernetesAffinity
	// NodeAffinity is [runners.kubernetes.affinity.node_affinity].
	NodeAffinity = common.KubernetesNodeAffinity
	// NodeSelector is node_affinity.required_during_scheduling_ignored_during_execution.
	NodeSelector = common.NodeSelector
	// NodeSelectorTerm is one node selector term.
	NodeSelectorTerm = common.NodeSelectorTerm
	// NodeSelectorRequirement is one match_expressions or match_fields element.
	NodeSelectorRequirement = common.NodeSelectorRequirement
	// PreferredSchedulingTerm is one preferred node affinity term.
	PreferredSchedulingTerm = common.PreferredSchedulingTerm
	// PodAffinity is [runners.kubernetes.affinity.pod_affinity].
	PodAffinity = common.KubernetesPodAffinity
	// PodAntiAffinity is [runners.kubernetes.affinity.pod_anti_affinity].
	PodAntiAffinity = common.KubernetesPodAntiAffinity
	// PodAffinityTerm is one required (anti-)affinity term.
	PodAffinityTerm = common.PodAffinityTerm
	// WeightedPodAffinityTerm is one preferred (anti-)affinity term.
	WeightedPodAffinityTerm = common.WeightedPodAffinityTerm
	// LabelSelector is a label_selector or namespace_selector.
	LabelSelector = common.LabelSelector
	// PodSecurityContext is [runners.kubernetes.pod_security_context].
	PodSecurityContext = common.KubernetesPodSecurityContext
	// ContainerSecurityContext is a [runners.kubernetes.*_container_security_context].
	ContainerSecurityContext = common.KubernetesContainerSecurityContext
	// ContainerCapabilities is a security context's capabilities table.
	ContainerCapabilities = common.KubernetesContainerCapabilities
	// SeccompProfile is a seccomp_profile table.
	SeccompProfile = common.KubernetesSeccompProfile
	// AppArmorProfile is an app_armor_profile table.
	AppArmorProfile = common.KubernetesAppArmorProfile
	// Volumes is [runners.kubernetes.volumes].
	Volumes = common.KubernetesVolumes
	// HostPathVolume is one [[runners.kubernetes.volumes.host_path]].
	HostPathVolume = common.KubernetesHostPath
	// PVCVolume is one [[runners.kubernetes.volumes.pvc]].
	PVCVolume = common.KubernetesPVC
	// ConfigMapVolume is one [[runners.kubernetes.volumes.config_map]].
	ConfigMapVolume = common.KubernetesConfigMap
	// SecretVolume is one [[runners.kubernetes.volumes.secret]].
	SecretVolume = common.KubernetesSecret
	// EmptyDirVolume is one [[runners.kubernetes.volumes.empty_dir]].
	EmptyDirVolume = common.KubernetesEmptyDir
	// CSIVolume is one [[runners.kubernetes.volumes.csi]].
	CSIVolume = common.KubernetesCSI
	// NFSVolume is one [[runners.kubernetes.volumes.nfs]] (decodes itself).
	NFSVolume = common.KubernetesNFS
	// DNSConfig is [runners.kubernetes.dns_config].
	DNSConfig = common.KubernetesDNSConfig
	// DNSConfigOption is one [[runners.kubernetes.dns_config.options]].
	DNSConfigOption = common.KubernetesDNSConfigOption
	// HostAlias is one [[runners.kubernetes.host_aliases]].
	HostAlias = common.KubernetesHostAliases
	// ContainerLifecycle is [runners.kubernetes.container_lifecycle].
	ContainerLifecycle = common.KubernetesContainerLifecyle
	// LifecycleHandler is a post_start or pre_stop table.
	LifecycleHandler = common.KubernetesLifecycleHandler
	// LifecycleExecAction is a lifecycle handler's exec table.
	LifecycleExecAction = common.KubernetesLifecycleExecAction
	// LifecycleHTTPGet is a lifecycle handler's http_get table.
	LifecycleHTTPGet = common.KubernetesLifecycleHTTPGet
	// LifecycleHTTPGetHeader is one http_get.http_headers element.
	LifecycleHTTPGetHeader = common.KubernetesLifecycleHTTPGetHeader
	// LifecycleTCPSocket is a lifecycle handler's tcp_socket table.
	LifecycleTCPSocket = common.KubernetesLifecycleTCPSocket
	// PodSpecPatch is one [[runners.kubernetes.pod_spec]].
	PodSpecPatch = common.KubernetesPodSpec
)
