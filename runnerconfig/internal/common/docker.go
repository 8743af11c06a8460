package common

// DockerConfig is [runners.docker]. host, tls_cert_path and tls_verify come
// from an embedded credentials struct in the runner and are flattened here.
type DockerConfig struct {
	// Daemon connection (flattened).
	Host                       string              `toml:"host"`
	CertPath                   string              `toml:"tls_cert_path"`
	TLSVerify                  bool                `toml:"tls_verify"`
	Hostname                   string              `toml:"hostname"`
	Image                      string              `toml:"image"`
	Runtime                    string              `toml:"runtime"`
	Memory                     string              `toml:"memory"`
	MemorySwap                 string              `toml:"memory_swap"`
	MemoryReservation          string              `toml:"memory_reservation"`
	CgroupParent               string              `toml:"cgroup_parent"`
	CPUSetCPUs                 string              `toml:"cpuset_cpus"`
	CPUSetMems                 string              `toml:"cpuset_mems"`
	CPUS                       string              `toml:"cpus"`
	CPUShares                  int64               `toml:"cpu_shares"`
	DNS                        []string            `toml:"dns"`
	DNSSearch                  []string            `toml:"dns_search"`
	Privileged                 bool                `toml:"privileged"`
	ServicesPrivileged         *bool               `toml:"services_privileged"`
	DisableEntrypointOverwrite bool                `toml:"disable_entrypoint_overwrite"`
	User                       string              `toml:"user"`
	AllowedUsers               []string            `toml:"allowed_users"`
	GroupAdd                   []string            `toml:"group_add"`
	UsernsMode                 string              `toml:"userns_mode"`
	CapAdd                     []string            `toml:"cap_add"`
	CapDrop                    []string            `toml:"cap_drop"`
	OomKillDisable             bool                `toml:"oom_kill_disable"`
	OomScoreAdjust             int                 `toml:"oom_score_adjust"`
	SecurityOpt                []string            `toml:"security_opt"`
	ServicesSecurityOpt        []string            `toml:"services_security_opt"`
	Devices                    []string            `toml:"devices"`
	DeviceCgroupRules          []string            `toml:"device_cgroup_rules"`
	Gpus                       string              `toml:"gpus"`
	ServicesDevices            map[string][]string `toml:"services_devices"`
	DisableCache               bool                `toml:"disable_cache"`
	Volumes                    []string            `toml:"volumes"`
	VolumeKeep                 bool                `toml:"volume_keep"`
	VolumeDriver               string              `toml:"volume_driver"`
	VolumeDriverOps            map[string]string   `toml:"volume_driver_ops"`
	CacheDir                   string              `toml:"cache_dir"`
	ExtraHosts                 []string            `toml:"extra_hosts"`
	VolumesFrom                []string            `toml:"volumes_from"`
	NetworkMode                string              `toml:"network_mode"`
	PidMode                    string              `toml:"pid_mode"`
	IpcMode                    string              `toml:"ipcmode"`
	MacAddress                 string              `toml:"mac_address"`
	Links                      []string            `toml:"links"`
	Services                   []Service           `toml:"services"`
	ServicesLimit              *int                `toml:"services_limit"`
	ServiceMemory              string              `toml:"service_memory"`
	ServiceMemorySwap          string              `toml:"service_memory_swap"`
	ServiceMemoryReservation   string              `toml:"service_memory_reservation"`
	ServiceCgroupParent        string              `toml:"service_cgroup_parent"`
	ServiceSlotCgroupTemplate  string              `toml:"service_slot_cgroup_template"`
	ServiceCPUSetCPUs          string              `toml:"service_cpuset_cpus"`
	ServiceCPUS                string              `toml:"service_cpus"`
	ServiceCPUShares           int64               `toml:"service_cpu_shares"`
	ServiceGpus                string              `toml:"service_gpus"`
	WaitForServicesTimeout     int                 `toml:"wait_for_services_timeout"` // seconds
	AllowedImages              []string            `toml:"allowed_images"`
	AllowedPrivilegedImages    []string            `toml:"allowed_privileged_images"`
	AllowedPrivilegedServices  []string            `toml:"allowed_privileged_services"`
	AllowedPullPolicies        []string            `toml:"allowed_pull_policies"`
	AllowedServices            []string            `toml:"allowed_services"`
	PullPolicy                 StringOrArray       `toml:"pull_policy"` // a string or an array of strings
	Isolation                  string              `toml:"isolation"`
	ShmSize                    int64               `toml:"shm_size"` // bytes
	Tmpfs                      map[string]string   `toml:"tmpfs"`
	ServicesTmpfs              map[string]string   `toml:"services_tmpfs"`
	SysCtls                    map[string]string   `toml:"sysctls"`
	HelperImage                string              `toml:"helper_image"`
	HelperImageFlavor          string              `toml:"helper_image_flavor"`
	ContainerLabels            map[string]string   `toml:"container_labels"`
	EnableIPv6                 bool                `toml:"enable_ipv6"`
	Ulimit                     map[string]string   `toml:"ulimit"`
	NetworkMTU                 int                 `toml:"network_mtu"`
	LogOptions                 map[string]string   `toml:"log_options"`
}

// Service is one [[runners.docker.services]] or [[runners.kubernetes.services]]
// element.
type Service struct {
	Name        string   `toml:"name"`
	Alias       string   `toml:"alias"`
	Command     []string `toml:"command"`
	Entrypoint  []string `toml:"entrypoint"`
	Environment []string `toml:"environment"`
}
