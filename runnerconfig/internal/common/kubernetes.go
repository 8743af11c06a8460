package common

import (
	"time"
)

// KubernetesConfig is [runners.kubernetes].
//
// The image pull policy key is pull_policy (a string or an array of strings);
// there is no image_pull_policy key. poll_interval and poll_timeout are plain
// integers (seconds). cleanup_grace_period_seconds and
// pod_termination_grace_period_seconds are *int64. cleanup_resources_timeout is
// a duration string.
type KubernetesConfig struct {
	Host                                              string                             `toml:"host"` // empty: in-cluster config, then the kubeconfig
	Context                                           string                             `toml:"context"`
	CertFile                                          string                             `toml:"cert_file"`
	KeyFile                                           string                             `toml:"key_file"`
	CAFile                                            string                             `toml:"ca_file"`
	BearerTokenOverwriteAllowed                       bool                               `toml:"bearer_token_overwrite_allowed"`
	BearerToken                                       string                             `toml:"bearer_token"`
	Image                                             string                             `toml:"image"`
	Namespace                                         string                             `toml:"namespace"`
	NamespaceOverwriteAllowed                         string                             `toml:"namespace_overwrite_allowed"`
	NamespacePerJob                                   bool                               `toml:"namespace_per_job"`
	Privileged                                        *bool                              `toml:"privileged"`
	RuntimeClassName                                  *string                            `toml:"runtime_class_name"`
	AllowPrivilegeEscalation                          *bool                              `toml:"allow_privilege_escalation"`
	CPULimit                                          string                             `toml:"cpu_limit"`
	CPULimitOverwriteMaxAllowed                       string                             `toml:"cpu_limit_overwrite_max_allowed"`
	CPURequest                                        string                             `toml:"cpu_request"`
	CPURequestOverwriteMaxAllowed                     string                             `toml:"cpu_request_overwrite_max_allowed"`
	MemoryLimit                                       string                             `toml:"memory_limit"`
	MemoryLimitOverwriteMaxAllowed                    string                             `toml:"memory_limit_overwrite_max_allowed"`
	MemoryRequest                                     string                             `toml:"memory_request"`
	MemoryRequestOverwriteMaxAllowed                  string                             `toml:"memory_request_overwrite_max_allowed"`
	EphemeralStorageLimit                             string                             `toml:"ephemeral_storage_limit"`
	EphemeralStorageLimitOverwriteMaxAllowed          string                             `toml:"ephemeral_storage_limit_overwrite_max_allowed"`
	EphemeralStorageRequest                           string                             `toml:"ephemeral_storage_request"`
	EphemeralStorageRequestOverwriteMaxAllowed        string                             `toml:"ephemeral_storage_request_overwrite_max_allowed"`
	ServiceCPULimit                                   string                             `toml:"service_cpu_limit"`
	ServiceCPULimitOverwriteMaxAllowed                string                             `toml:"service_cpu_limit_overwrite_max_allowed"`
	ServiceCPURequest                                 string                             `toml:"service_cpu_request"`
	ServiceCPURequestOverwriteMaxAllowed              string                             `toml:"service_cpu_request_overwrite_max_allowed"`
	ServiceMemoryLimit                                string                             `toml:"service_memory_limit"`
	ServiceMemoryLimitOverwriteMaxAllowed             string                             `toml:"service_memory_limit_overwrite_max_allowed"`
	ServiceMemoryRequest                              string                             `toml:"service_memory_request"`
	ServiceMemoryRequestOverwriteMaxAllowed           string                             `toml:"service_memory_request_overwrite_max_allowed"`
	ServiceEphemeralStorageLimit                      string                             `toml:"service_ephemeral_storage_limit"`
	ServiceEphemeralStorageLimitOverwriteMaxAllowed   string                             `toml:"service_ephemeral_storage_limit_overwrite_max_allowed"`
	ServiceEphemeralStorageRequest                    string                             `toml:"service_ephemeral_storage_request"`
	ServiceEphemeralStorageRequestOverwriteMaxAllowed string                             `toml:"service_ephemeral_storage_request_overwrite_max_allowed"`
	HelperCPULimit                                    string                             `toml:"helper_cpu_limit"`
	HelperCPULimitOverwriteMaxAllowed                 string                             `toml:"helper_cpu_limit_overwrite_max_allowed"`
	HelperCPURequest                                  string                             `toml:"helper_cpu_request"`
	HelperCPURequestOverwriteMaxAllowed               string                             `toml:"helper_cpu_request_overwrite_max_allowed"`
	HelperMemoryLimit                                 string                             `toml:"helper_memory_limit"`
	HelperMemoryLimitOverwriteMaxAllowed              string                             `toml:"helper_memory_limit_overwrite_max_allowed"`
	HelperMemoryRequest                               string                             `toml:"helper_memory_request"`
	HelperMemoryRequestOverwriteMaxAllowed            string                             `toml:"helper_memory_request_overwrite_max_allowed"`
	HelperEphemeralStorageLimit                       string                             `toml:"helper_ephemeral_storage_limit"`
	HelperEphemeralStorageLimitOverwriteMaxAllowed    string                             `toml:"helper_ephemeral_storage_limit_overwrite_max_allowed"`
	HelperEphemeralStorageRequest                     string                             `toml:"helper_ephemeral_storage_request"`
	HelperEphemeralStorageRequestOverwriteMaxAllowed  string                             `toml:"helper_ephemeral_storage_request_overwrite_max_allowed"`
	PodCPULimit                                       string                             `toml:"pod_cpu_limit"`
	PodCPULimitOverwriteMaxAllowed                    string                             `toml:"pod_cpu_limit_overwrite_max_allowed"`
	PodCPURequest                                     string                             `toml:"pod_cpu_request"`
	PodCPURequestOverwriteMaxAllowed                  string                             `toml:"pod_cpu_request_overwrite_max_allowed"`
	PodMemoryLimit                                    string                             `toml:"pod_memory_limit"`
	PodMemoryLimitOverwriteMaxAllowed                 string                             `toml:"pod_memory_limit_overwrite_max_allowed"`
	PodMemoryRequest                                  string                             `toml:"pod_memory_request"`
	PodMemoryRequestOverwriteMaxAllowed               string                             `toml:"pod_memory_request_overwrite_max_allowed"`
	AllowedImages                                     []string                           `toml:"allowed_images"`
	AllowedPullPolicies                               []string                           `toml:"allowed_pull_policies"`
	AllowedServices                                   []string                           `toml:"allowed_services"`
	AllowedUsers                                      []string                           `toml:"allowed_users"`
	AllowedGroups                                     []string                           `toml:"allowed_groups"`
	PullPolicy                                        StringOrArray                      `toml:"pull_policy"` // a string or an array of strings; there is no image_pull_policy
	NodeSelector                                      map[string]string                  `toml:"node_selector"`
	NodeSelectorOverwriteAllowed                      string                             `toml:"node_selector_overwrite_allowed"`
	NodeTolerations                                   map[string]string                  `toml:"node_tolerations"`
	NodeTolerationsOverwriteAllowed                   string                             `toml:"node_tolerations_overwrite_allowed"`
	Affinity                                          KubernetesAffinity                 `toml:"affinity"`
	ImagePullSecrets                                  []string                           `toml:"image_pull_secrets"`
	UseServiceAccountImagePullSecrets                 bool                               `toml:"use_service_account_image_pull_secrets"`
	HelperImage                                       string                             `toml:"helper_image"`
	HelperImageFlavor                                 string                             `toml:"helper_image_flavor"`
	HelperImageAutosetArchAndOS                       bool                               `toml:"helper_image_autoset_arch_and_os"`
	PodTerminationGracePeriodSeconds                  *int64                             `toml:"pod_termination_grace_period_seconds"` // seconds
	CleanupGracePeriodSeconds                         *int64                             `toml:"cleanup_grace_period_seconds"`         // seconds
	CleanupResourcesTimeout                           *time.Duration                     `toml:"cleanup_resources_timeout"`            // duration string
	PollInterval                                      int                                `toml:"poll_interval"`                        // seconds
	PollTimeout                                       int                                `toml:"poll_timeout"`                         // seconds
	ResourceAvailabilityCheckMaxAttempts              int                                `toml:"resource_availability_check_max_attempts"`
	RequestRetryLimit                                 int                                `toml:"retry_limit"`
	RequestRetryBackoffMax                            int                                `toml:"retry_backoff_max"` // milliseconds
	RequestRetryLimits                                map[string]int                     `toml:"retry_limits"`
	PodLabels                                         map[string]string                  `toml:"pod_labels"`
	PodLabelsOverwriteAllowed                         string                             `toml:"pod_labels_overwrite_allowed"`
	SchedulerName                                     string                             `toml:"scheduler_name"`
	ServiceAccount                                    string                             `toml:"service_account"`
	ServiceAccountOverwriteAllowed                    string                             `toml:"service_account_overwrite_allowed"`
	AutomountServiceAccountToken                      *bool                              `toml:"automount_service_account_token"`
	PodAnnotations                                    map[string]string                  `toml:"pod_annotations"`
	PodAnnotationsOverwriteAllowed                    string                             `toml:"pod_annotations_overwrite_allowed"`
	PodSecurityContext                                KubernetesPodSecurityContext       `toml:"pod_security_context"`
	InitPermissionsContainerSecurityContext           KubernetesContainerSecurityContext `toml:"init_permissions_container_security_context"`
	BuildContainerSecurityContext                     KubernetesContainerSecurityContext `toml:"build_container_security_context"`
	HelperContainerSecurityContext                    KubernetesContainerSecurityContext `toml:"helper_container_security_context"`
	ServiceContainerSecurityContext                   KubernetesContainerSecurityContext `toml:"service_container_security_context"`
	Volumes                                           KubernetesVolumes                  `toml:"volumes"`
	HostAliases                                       []KubernetesHostAliases            `toml:"host_aliases"`
	Services                                          []Service                          `toml:"services"`
	CapAdd                                            []string                           `toml:"cap_add"`
	CapDrop                                           []string                           `toml:"cap_drop"`
	DNSPolicy                                         string                             `toml:"dns_policy"`
	DNSConfig                                         KubernetesDNSConfig                `toml:"dns_config"`
	ContainerLifecycle                                KubernetesContainerLifecyle        `toml:"container_lifecycle"`
	PriorityClassName                                 string                             `toml:"priority_class_name"`
	PodSpec                                           []KubernetesPodSpec                `toml:"pod_spec"`
	LogsBaseDir                                       string                             `toml:"logs_base_dir"`
	ScriptsBaseDir                                    string                             `toml:"scripts_base_dir"`
	PrintPodWarningEvents                             *bool                              `toml:"print_pod_warning_events"`
	PodDisruptionBudget                               *bool                              `toml:"pod_disruption_budget"`
	Autoscaler                                        *KubernetesAutoscalerConfig        `toml:"autoscaler"`
}

// KubernetesAutoscalerConfig is [runners.kubernetes.autoscaler]: pause pods.
// This is a real field of gitlab-runner's KubernetesConfig (from v18.11.0;
// pause_pod_image_pull_secrets from v19.1.0; unchanged in v19.2.0 to
// v19.2.2), not an invention of the spec; see SpecOnlyKeys in package
// runnerconfig. The runner runs pause pods only when Policy is not empty.
type KubernetesAutoscalerConfig struct {
	MaxPausePods              int                      `toml:"max_pause_pods"` // 0 = unlimited
	PausePodImage             string                   `toml:"pause_pod_image"`
	PausePodPriorityClassName string                   `toml:"pause_pod_priority_class_name"`
	Policy                    []AutoscalerPolicyConfig `toml:"policy"`
	PausePodImagePullSecrets  []string                 `toml:"pause_pod_image_pull_secrets"`
}

// KubernetesAffinity is [runners.kubernetes.affinity].
type KubernetesAffinity struct {
	NodeAffinity    *KubernetesNodeAffinity    `toml:"node_affinity"`
	PodAffinity     *KubernetesPodAffinity     `toml:"pod_affinity"`
	PodAntiAffinity *KubernetesPodAntiAffinity `toml:"pod_anti_affinity"`
}

// KubernetesNodeAffinity is [runners.kubernetes.affinity.node_affinity].
type KubernetesNodeAffinity struct {
	RequiredDuringSchedulingIgnoredDuringExecution  *NodeSelector             `toml:"required_during_scheduling_ignored_during_execution"`
	PreferredDuringSchedulingIgnoredDuringExecution []PreferredSchedulingTerm `toml:"preferred_during_scheduling_ignored_during_execution"`
}

// NodeSelector is a node affinity's required_during_scheduling_ignored_during_execution table.
type NodeSelector struct {
	NodeSelectorTerms []NodeSelectorTerm `toml:"node_selector_terms"`
}

// NodeSelectorTerm is one node selector term.
type NodeSelectorTerm struct {
	MatchExpressions []NodeSelectorRequirement `toml:"match_expressions"`
	MatchFields      []NodeSelectorRequirement `toml:"match_fields"`
}

// NodeSelectorRequirement is one match_expressions or match_fields element.
type NodeSelectorRequirement struct {
	Key      string   `toml:"key"`
	Operator string   `toml:"operator"`
	Values   []string `toml:"values"`
}

// PreferredSchedulingTerm is one preferred node affinity term.
type PreferredSchedulingTerm struct {
	Weight     int32            `toml:"weight"`
	Preference NodeSelectorTerm `toml:"preference"`
}

// KubernetesPodAffinity is [runners.kubernetes.affinity.pod_affinity].
type KubernetesPodAffinity struct {
	RequiredDuringSchedulingIgnoredDuringExecution  []PodAffinityTerm         `toml:"required_during_scheduling_ignored_during_execution"`
	PreferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm `toml:"preferred_during_scheduling_ignored_during_execution"`
}

// KubernetesPodAntiAffinity is [runners.kubernetes.affinity.pod_anti_affinity].
type KubernetesPodAntiAffinity struct {
	RequiredDuringSchedulingIgnoredDuringExecution  []PodAffinityTerm         `toml:"required_during_scheduling_ignored_during_execution"`
	PreferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm `toml:"preferred_during_scheduling_ignored_during_execution"`
}

// PodAffinityTerm is one required (anti-)affinity term.
type PodAffinityTerm struct {
	LabelSelector     *LabelSelector `toml:"label_selector"`
	Namespaces        []string       `toml:"namespaces"`
	TopologyKey       string         `toml:"topology_key"`
	NamespaceSelector *LabelSelector `toml:"namespace_selector"`
	MatchLabelKeys    []string       `toml:"match_label_keys"`
	MismatchLabelKeys []string       `toml:"mismatch_label_keys"`
}

// WeightedPodAffinityTerm is one preferred (anti-)affinity term.
type WeightedPodAffinityTerm struct {
	Weight          int32           `toml:"weight"`
	PodAffinityTerm PodAffinityTerm `toml:"pod_affinity_term"`
}

// LabelSelector is a label_selector or namespace_selector table.
type LabelSelector struct {
	MatchLabels      map[string]string         `toml:"match_labels"`
	MatchExpressions []NodeSelectorRequirement `toml:"match_expressions"`
}

// KubernetesPodSecurityContext is [runners.kubernetes.pod_security_context].
type KubernetesPodSecurityContext struct {
	FSGroup            *int64                     `toml:"fs_group"`
	RunAsGroup         *int64                     `toml:"run_as_group"`
	RunAsNonRoot       *bool                      `toml:"run_as_non_root"`
	RunAsUser          *int64                     `toml:"run_as_user"`
	SupplementalGroups []int64                    `toml:"supplemental_groups"`
	SELinuxType        string                     `toml:"selinux_type"`
	SeccompProfile     *KubernetesSeccompProfile  `toml:"seccomp_profile"`
	AppArmorProfile    *KubernetesAppArmorProfile `toml:"app_armor_profile"`
}

// KubernetesContainerSecurityContext is one of the
// [runners.kubernetes.*_container_security_context] tables.
type KubernetesContainerSecurityContext struct {
	Capabilities             *KubernetesContainerCapabilities `toml:"capabilities"`
	Privileged               *bool                            `toml:"privileged"`
	RunAsUser                *int64                           `toml:"run_as_user"`
	RunAsGroup               *int64                           `toml:"run_as_group"`
	RunAsNonRoot             *bool                            `toml:"run_as_non_root"`
	ReadOnlyRootFilesystem   *bool                            `toml:"read_only_root_filesystem"`
	AllowPrivilegeEscalation *bool                            `toml:"allow_privilege_escalation"`
	SELinuxType              string                           `toml:"selinux_type"`
	ProcMount                string                           `toml:"proc_mount"`
	SeccompProfile           *KubernetesSeccompProfile        `toml:"seccomp_profile"`
	AppArmorProfile          *KubernetesAppArmorProfile       `toml:"app_armor_profile"`
}

// KubernetesContainerCapabilities is a container security context's capabilities table.
type KubernetesContainerCapabilities struct {
	Add  []string `toml:"add"`
	Drop []string `toml:"drop"`
}

// KubernetesSeccompProfile is a seccomp_profile table.
type KubernetesSeccompProfile struct {
	Type             string `toml:"type"`
	LocalhostProfile string `toml:"localhost_profile"`
}

// KubernetesAppArmorProfile is an app_armor_profile table.
type KubernetesAppArmorProfile struct {
	Type             string `toml:"type"`
	LocalhostProfile string `toml:"localhost_profile"`
}

// KubernetesVolumes is [runners.kubernetes.volumes]; each key is an array of tables.
type KubernetesVolumes struct {
	HostPaths  []KubernetesHostPath  `toml:"host_path"`
	PVCs       []KubernetesPVC       `toml:"pvc"`
	ConfigMaps []KubernetesConfigMap `toml:"config_map"`
	Secrets    []KubernetesSecret    `toml:"secret"`
	EmptyDirs  []KubernetesEmptyDir  `toml:"empty_dir"`
	CSIs       []KubernetesCSI       `toml:"csi"`
	NFSVolumes []KubernetesNFS       `toml:"nfs"`
}

// KubernetesHostPath is one [[runners.kubernetes.volumes.host_path]].
type KubernetesHostPath struct {
	Name             string  `toml:"name"`
	MountPath        string  `toml:"mount_path"`
	SubPath          string  `toml:"sub_path"`
	ReadOnly         bool    `toml:"read_only"`
	HostPath         string  `toml:"host_path"`
	MountPropagation *string `toml:"mount_propagation"`
}

// KubernetesPVC is one [[runners.kubernetes.volumes.pvc]].
type KubernetesPVC struct {
	Name             string  `toml:"name"`
	MountPath        string  `toml:"mount_path"`
	SubPath          string  `toml:"sub_path"`
	ReadOnly         bool    `toml:"read_only"`
	MountPropagation *string `toml:"mount_propagation"`
}

// KubernetesConfigMap is one [[runners.kubernetes.volumes.config_map]].
type KubernetesConfigMap struct {
	Name      string            `toml:"name"`
	MountPath string            `toml:"mount_path"`
	SubPath   string            `toml:"sub_path"`
	ReadOnly  bool              `toml:"read_only"`
	Items     map[string]string `toml:"items"`
}

// KubernetesSecret is one [[runners.kubernetes.volumes.secret]].
type KubernetesSecret struct {
	Name      string            `toml:"name"`
	MountPath string            `toml:"mount_path"`
	SubPath   string            `toml:"sub_path"`
	ReadOnly  bool              `toml:"read_only"`
	Items     map[string]string `toml:"items"`
}

// KubernetesEmptyDir is one [[runners.kubernetes.volumes.empty_dir]].
type KubernetesEmptyDir struct {
	Name             string  `toml:"name"`
	MountPath        string  `toml:"mount_path"`
	SubPath          string  `toml:"sub_path"`
	Medium           string  `toml:"medium"`
	SizeLimit        string  `toml:"size_limit"`
	MountPropagation *string `toml:"mount_propagation"`
}

// KubernetesCSI is one [[runners.kubernetes.volumes.csi]].
type KubernetesCSI struct {
	Name             string            `toml:"name"`
	MountPath        string            `toml:"mount_path"`
	SubPath          string            `toml:"sub_path"`
	Driver           string            `toml:"driver"`
	FSType           string            `toml:"fs_type"`
	ReadOnly         bool              `toml:"read_only"`
	VolumeAttributes map[string]string `toml:"volume_attributes"`
}

// KubernetesNFS is one [[runners.kubernetes.volumes.nfs]]. It decodes itself
// (UnmarshalTOML, in nfs.go) exactly as the runner's does, so every key inside
// an nfs table counts as decoded, known or not.
type KubernetesNFS struct {
	Name      string `toml:"name"`
	MountPath string `toml:"mount_path"`
	SubPath   string `toml:"sub_path"`
	Server    string `toml:"server"`
	Path      string `toml:"path"`
	ReadOnly  bool   `toml:"read_only"`
}

// KubernetesDNSConfig is [runners.kubernetes.dns_config].
type KubernetesDNSConfig struct {
	Nameservers []string                    `toml:"nameservers"`
	Options     []KubernetesDNSConfigOption `toml:"options"`
	Searches    []string                    `toml:"searches"`
}

// KubernetesDNSConfigOption is one [[runners.kubernetes.dns_config.options]].
type KubernetesDNSConfigOption struct {
	Name  string  `toml:"name"`
	Value *string `toml:"value"`
}

// KubernetesHostAliases is one [[runners.kubernetes.host_aliases]] element.
type KubernetesHostAliases struct {
	IP        string   `toml:"ip"`
	Hostnames []string `toml:"hostnames"`
}

// KubernetesContainerLifecyle is [runners.kubernetes.container_lifecycle]
// (the runner's type name carries the misspelling; it appears in errors).
type KubernetesContainerLifecyle struct {
	PostStart *KubernetesLifecycleHandler `toml:"post_start"`
	PreStop   *KubernetesLifecycleHandler `toml:"pre_stop"`
}

// KubernetesLifecycleHandler is a post_start or pre_stop table.
type KubernetesLifecycleHandler struct {
	Exec      *KubernetesLifecycleExecAction `toml:"exec"`
	HTTPGet   *KubernetesLifecycleHTTPGet    `toml:"http_get"`
	TCPSocket *KubernetesLifecycleTCPSocket  `toml:"tcp_socket"`
}

// KubernetesLifecycleExecAction is a lifecycle handler's exec table.
type KubernetesLifecycleExecAction struct {
	Command []string `toml:"command"`
}

// KubernetesLifecycleHTTPGet is a lifecycle handler's http_get table.
type KubernetesLifecycleHTTPGet struct {
	Host        string                             `toml:"host"`
	HTTPHeaders []KubernetesLifecycleHTTPGetHeader `toml:"http_headers"`
	Path        string                             `toml:"path"`
	Port        int                                `toml:"port"`
	Scheme      string                             `toml:"scheme"`
}

// KubernetesLifecycleHTTPGetHeader is one http_get.http_headers element.
type KubernetesLifecycleHTTPGetHeader struct {
	Name  string `toml:"name"`
	Value string `toml:"value"`
}

// KubernetesLifecycleTCPSocket is a lifecycle handler's tcp_socket table.
type KubernetesLifecycleTCPSocket struct {
	Host string `toml:"host"`
	Port int    `toml:"port"`
}

// KubernetesPodSpec is one [[runners.kubernetes.pod_spec]] patch.
type KubernetesPodSpec struct {
	Name      string `toml:"name"`
	PatchPath string `toml:"patch_path"`
	Patch     string `toml:"patch"`
	PatchType string `toml:"patch_type"`
}
