// Package jobpod builds the pod the Kubernetes executor asks the apiserver
// for, from [runners.kubernetes] alone: its containers, their requests and
// limits, its security contexts, service account and pull secrets. The
// checks that weigh a job pod against the cluster (namespace-quota,
// job-identity, job-terminations) read it here, so the runner's rules are
// written once.
//
// Read from gitlab-runner v19.3.0, executors/kubernetes/kubernetes.go:
//   - containers "build" and "helper" (createBuildAndHelperContainers), one
//     per service, and the init container "init-permissions"
//     (buildPermissionsInitContainer), present unless
//     FF_USE_LEGACY_KUBERNETES_EXECUTION_STRATEGY is on without
//     FF_USE_DUMB_INIT_WITH_KUBERNETES_EXECUTOR (buildInitContainers);
//   - the build container takes cpu_request/memory_request/
//     ephemeral_storage_request and the *_limit keys; the helper and the
//     init container take helper_*; services take service_*
//     (executors/kubernetes/overwrites.go createOverwrites); the pod-level
//     pod_* keys go to spec.resources (podResourcesReference);
//   - an unset key is no entry at all (createResourceList, util.go): the
//     runner itself has no default request or limit;
//   - a job may raise a value through KUBERNETES_CPU_REQUEST and the like up
//     to *_overwrite_max_allowed (evaluateMaxResourceOverwrite), so the most
//     a job can ask is the larger of the two;
//   - every container's security context drops NET_RAW unless cap_add adds
//     it, and privileged and allow_privilege_escalation fall back to the
//     [runners.kubernetes] values (common/config.go GetContainerSecurityContext);
//     the pod's is pod_security_context (GetPodSecurityContext).
package jobpod

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// Container names as the executor spells them (kubernetes.go, v19.3.0:
// buildContainerName, helperContainerName, initPermissionContainerName).
const (
	Build           = "build"
	Helper          = "helper"
	InitPermissions = "init-permissions"
)

// Ask selects which values a job pod carries: the configured ones, which
// every job gets unless it overrides them, or the most a job may raise
// them to.
type Ask int

const (
	Configured Ask = iota
	MostAllowed
)

// Flags are the feature flags that change the pod's shape.
type Flags struct {
	LegacyExecution bool // FF_USE_LEGACY_KUBERNETES_EXECUTION_STRATEGY
	DumbInit        bool // FF_USE_DUMB_INIT_WITH_KUBERNETES_EXECUTOR
}

// Pod is the job pod for k, with a placeholder name (the runner's is
// runner-<token>-project-<id>-concurrent-<n>-<suffix>) and no image
// beyond what config.toml says. A quantity that does not parse is an error,
// as it is for the runner (resourceQuantityError).
func Pod(k *runnerconfig.Kubernetes, f Flags, ask Ask) (*corev1.Pod, error) {
	pick := func(value, max string) string {
		if ask == MostAllowed && max != "" {
			if larger(max, value) {
				return max
			}
		}
		return value
	}
	list := func(what, cpu, mem, eph string) (corev1.ResourceList, error) {
		out := corev1.ResourceList{}
		for name, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem, corev1.ResourceEphemeralStorage: eph} {
			if v == "" {
				continue
			}
			q, err := resource.ParseQuantity(v)
			if err != nil {
				return nil, fmt.Errorf("%s %s %q: %w", what, name, v, err)
			}
			out[name] = q
		}
		return out, nil
	}
	var errs []error
	must := func(l corev1.ResourceList, err error) corev1.ResourceList {
		if err != nil {
			errs = append(errs, err)
		}
		return l
	}
	build := corev1.ResourceRequirements{
		Requests: must(list("build requests", pick(k.CPURequest, k.CPURequestOverwriteMaxAllowed), pick(k.MemoryRequest, k.MemoryRequestOverwriteMaxAllowed), pick(k.EphemeralStorageRequest, k.EphemeralStorageRequestOverwriteMaxAllowed))),
		Limits:   must(list("build limits", pick(k.CPULimit, k.CPULimitOverwriteMaxAllowed), pick(k.MemoryLimit, k.MemoryLimitOverwriteMaxAllowed), pick(k.EphemeralStorageLimit, k.EphemeralStorageLimitOverwriteMaxAllowed))),
	}
	helper := corev1.ResourceRequirements{
		Requests: must(list("helper requests", pick(k.HelperCPURequest, k.HelperCPURequestOverwriteMaxAllowed), pick(k.HelperMemoryRequest, k.HelperMemoryRequestOverwriteMaxAllowed), pick(k.HelperEphemeralStorageRequest, k.HelperEphemeralStorageRequestOverwriteMaxAllowed))),
		Limits:   must(list("helper limits", pick(k.HelperCPULimit, k.HelperCPULimitOverwriteMaxAllowed), pick(k.HelperMemoryLimit, k.HelperMemoryLimitOverwriteMaxAllowed), pick(k.HelperEphemeralStorageLimit, k.HelperEphemeralStorageLimitOverwriteMaxAllowed))),
	}
	service := corev1.ResourceRequirements{
		Requests: must(list("service requests", pick(k.ServiceCPURequest, k.ServiceCPURequestOverwriteMaxAllowed), pick(k.ServiceMemoryRequest, k.ServiceMemoryRequestOverwriteMaxAllowed), pick(k.ServiceEphemeralStorageRequest, k.ServiceEphemeralStorageRequestOverwriteMaxAllowed))),
		Limits:   must(list("service limits", pick(k.ServiceCPULimit, k.ServiceCPULimitOverwriteMaxAllowed), pick(k.ServiceMemoryLimit, k.ServiceMemoryLimitOverwriteMaxAllowed), pick(k.ServiceEphemeralStorageLimit, k.ServiceEphemeralStorageLimitOverwriteMaxAllowed))),
	}
	podLevel := corev1.ResourceRequirements{
		Requests: must(list("pod requests", pick(k.PodCPURequest, k.PodCPURequestOverwriteMaxAllowed), pick(k.PodMemoryRequest, k.PodMemoryRequestOverwriteMaxAllowed), "")),
		Limits:   must(list("pod limits", pick(k.PodCPULimit, k.PodCPULimitOverwriteMaxAllowed), pick(k.PodMemoryLimit, k.PodMemoryLimitOverwriteMaxAllowed), "")),
	}
	if len(errs) > 0 {
		return nil, errs[0]
	}
	image := k.Image
	if image == "" {
		image = "(the job's image)"
	}
	helperImage := k.HelperImage
	if helperImage == "" {
		helperImage = "(the runner's helper image)"
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "runner-<token>-project-<id>-concurrent-<n>", Namespace: k.Namespace},
		Spec: corev1.PodSpec{
			ServiceAccountName: k.ServiceAccount,
			SecurityContext:    podSecurityContext(k.PodSecurityContext),
			Containers: []corev1.Container{
				{Name: Build, Image: image, Resources: build, SecurityContext: containerSecurityContext(k, k.BuildContainerSecurityContext)},
				{Name: Helper, Image: helperImage, Resources: helper, SecurityContext: containerSecurityContext(k, k.HelperContainerSecurityContext)},
			},
			Volumes: volumes(k.Volumes),
		},
	}
	if len(podLevel.Requests) > 0 || len(podLevel.Limits) > 0 {
		pod.Spec.Resources = &podLevel
	}
	// Services are named svc-0, svc-1, ... by their order in the job
	// (kubernetes.go preparePodServices via getSortedServiceNames); those of
	// config.toml come first.
	for i, s := range k.Services {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
			Name: fmt.Sprintf("svc-%d", i), Image: s.Name, Resources: service,
			SecurityContext: containerSecurityContext(k, k.ServiceContainerSecurityContext),
		})
	}
	if !f.LegacyExecution || f.DumbInit {
		pod.Spec.InitContainers = []corev1.Container{{
			Name: InitPermissions, Image: helperImage, Resources: helper,
			SecurityContext: containerSecurityContext(k, k.InitPermissionsContainerSecurityContext),
		}}
	}
	for _, s := range k.ImagePullSecrets {
		if !k.UseServiceAccountImagePullSecrets {
			pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
		}
	}
	return pod, nil
}

func larger(a, b string) bool {
	qa, err := resource.ParseQuantity(a)
	if err != nil {
		return false
	}
	if b == "" {
		return true
	}
	qb, err := resource.ParseQuantity(b)
	return err != nil || qa.Cmp(qb) > 0
}

// AllContainers are the init and regular containers, init first.
func AllContainers(p *corev1.Pod) []corev1.Container {
	return append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...)
}

// Sum is what the pod counts against a quota, as the apiserver's pod
// evaluator counts it (k8s.io/component-helpers resource PodRequests and
// PodLimits): the sum of the containers, or the largest init container
// when that is more, per resource; spec.resources when the pod sets it.
func Sum(p *corev1.Pod, limits bool) corev1.ResourceList {
	get := func(r corev1.ResourceRequirements) corev1.ResourceList {
		if limits {
			return r.Limits
		}
		return effectiveRequests(r)
	}
	sum := corev1.ResourceList{}
	for _, c := range p.Spec.Containers {
		for name, q := range get(c.Resources) {
			v := sum[name]
			v.Add(q)
			sum[name] = v
		}
	}
	for _, c := range p.Spec.InitContainers {
		for name, q := range get(c.Resources) {
			if cur, ok := sum[name]; !ok || q.Cmp(cur) > 0 {
				sum[name] = q.DeepCopy()
			}
		}
	}
	if r := p.Spec.Resources; r != nil {
		for name, q := range get(*r) {
			sum[name] = q.DeepCopy()
		}
	}
	return sum
}

// effectiveRequests are a container's requests after the apiserver's
// defaulting: a limit with no request is the request (SetDefaults_Pod,
// pkg/apis/core/v1/defaults.go).
func effectiveRequests(r corev1.ResourceRequirements) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range r.Limits {
		out[name] = q.DeepCopy()
	}
	for name, q := range r.Requests {
		out[name] = q.DeepCopy()
	}
	return out
}

// EffectiveRequests is effectiveRequests for one container.
func EffectiveRequests(c corev1.Container) corev1.ResourceList { return effectiveRequests(c.Resources) }

func podSecurityContext(s runnerconfig.PodSecurityContext) *corev1.PodSecurityContext {
	if s.FSGroup == nil && s.RunAsGroup == nil && s.RunAsNonRoot == nil && s.RunAsUser == nil &&
		len(s.SupplementalGroups) == 0 && s.SELinuxType == "" && s.SeccompProfile == nil && s.AppArmorProfile == nil {
		return nil
	}
	out := &corev1.PodSecurityContext{
		FSGroup: s.FSGroup, RunAsGroup: s.RunAsGroup, RunAsNonRoot: s.RunAsNonRoot, RunAsUser: s.RunAsUser,
		SupplementalGroups: s.SupplementalGroups, SeccompProfile: seccomp(s.SeccompProfile), AppArmorProfile: apparmor(s.AppArmorProfile),
	}
	if s.SELinuxType != "" {
		out.SELinuxOptions = &corev1.SELinuxOptions{Type: s.SELinuxType}
	}
	return out
}

// containerSecurityContext is GetContainerSecurityContext with the
// default drop of NET_RAW (defaultCapDrop, Linux jobs).
func containerSecurityContext(k *runnerconfig.Kubernetes, s runnerconfig.ContainerSecurityContext) *corev1.SecurityContext {
	out := &corev1.SecurityContext{
		Capabilities:             capabilities(k, s),
		Privileged:               orBool(s.Privileged, k.Privileged),
		AllowPrivilegeEscalation: orBool(s.AllowPrivilegeEscalation, k.AllowPrivilegeEscalation),
		RunAsGroup:               s.RunAsGroup, RunAsNonRoot: s.RunAsNonRoot, RunAsUser: s.RunAsUser,
		ReadOnlyRootFilesystem: s.ReadOnlyRootFilesystem,
		SeccompProfile:         seccomp(s.SeccompProfile), AppArmorProfile: apparmor(s.AppArmorProfile),
	}
	if s.ProcMount != "" {
		pm := corev1.ProcMountType(s.ProcMount)
		out.ProcMount = &pm
	}
	if s.SELinuxType != "" {
		out.SELinuxOptions = &corev1.SELinuxOptions{Type: s.SELinuxType}
	}
	return out
}

// capabilities is mergeCapabilitiesAddDrop(getCapabilities(NET_RAW),
// the container table's): the container's add or drop list, when set,
// replaces the merged one.
func capabilities(k *runnerconfig.Kubernetes, s runnerconfig.ContainerSecurityContext) *corev1.Capabilities {
	enabled := map[string]bool{"NET_RAW": false}
	for _, c := range k.CapAdd {
		enabled[c] = true
	}
	for _, c := range k.CapDrop {
		enabled[c] = false
	}
	merged := &corev1.Capabilities{}
	names := make([]string, 0, len(enabled))
	for c := range enabled {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		if enabled[c] {
			merged.Add = append(merged.Add, corev1.Capability(c))
		} else {
			merged.Drop = append(merged.Drop, corev1.Capability(c))
		}
	}
	if s.Capabilities != nil {
		if s.Capabilities.Add != nil {
			merged.Add = caps(s.Capabilities.Add)
		}
		if s.Capabilities.Drop != nil {
			merged.Drop = caps(s.Capabilities.Drop)
		}
	}
	if merged.Add == nil && merged.Drop == nil {
		return nil
	}
	return merged
}

func caps(in []string) []corev1.Capability {
	out := make([]corev1.Capability, len(in))
	for i, c := range in {
		out[i] = corev1.Capability(c)
	}
	return out
}

func orBool(v, fallback *bool) *bool {
	if v == nil {
		return fallback
	}
	return v
}

func seccomp(p *runnerconfig.SeccompProfile) *corev1.SeccompProfile {
	if p == nil {
		return nil
	}
	out := &corev1.SeccompProfile{Type: corev1.SeccompProfileType(p.Type)}
	if p.LocalhostProfile != "" {
		out.LocalhostProfile = &p.LocalhostProfile
	}
	return out
}

func apparmor(p *runnerconfig.AppArmorProfile) *corev1.AppArmorProfile {
	if p == nil {
		return nil
	}
	out := &corev1.AppArmorProfile{Type: corev1.AppArmorProfileType(p.Type)}
	if p.LocalhostProfile != "" {
		out.LocalhostProfile = &p.LocalhostProfile
	}
	return out
}

// volumes are the [runners.kubernetes.volumes] a Pod Security level
// weighs (host_path is forbidden by baseline; nfs is outside restricted's
// list); the runner's own emptyDir volumes are allowed by both.
func volumes(v runnerconfig.Volumes) []corev1.Volume {
	var out []corev1.Volume
	for _, h := range v.HostPaths {
		out = append(out, corev1.Volume{Name: h.Name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: h.HostPath}}})
	}
	for _, n := range v.NFSVolumes {
		out = append(out, corev1.Volume{Name: n.Name, VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: n.Server, Path: n.Path}}})
	}
	for _, p := range v.PVCs {
		out = append(out, corev1.Volume{Name: p.Name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: p.Name}}})
	}
	return out
}

// For is the job pod of a Kubernetes [[runners]] entry, with the feature
// flags its config sets.
func For(r *runnerconfig.Runner, ask Ask) (*corev1.Pod, error) {
	k := r.Kubernetes
	if k == nil {
		k = &runnerconfig.Kubernetes{}
	}
	legacy, _ := runnerconfig.FeatureFlag(r, runnerconfig.FFUseLegacyKubernetesExecutionStrategy)
	dumb, _ := runnerconfig.FeatureFlag(r, "FF_USE_DUMB_INIT_WITH_KUBERNETES_EXECUTOR")
	return Pod(k, Flags{LegacyExecution: legacy, DumbInit: dumb}, ask)
}
