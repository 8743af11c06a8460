package jobpod

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// The pod the executor sends to the apiserver, for a server-side dry run
// (job-admission): Pod's containers, resources and security contexts, and
// everything else of it admission weighs. Read from gitlab-runner v19.3.0,
// executors/kubernetes/kubernetes.go:
//
//   - preparePodConfig: the name generateNameForK8sResources(ProjectUniqueName())
//     ("runner-<ShortDescription()>-project-<id>-concurrent-<n>" and a random
//     suffix; TokenStandIn for the token's part), the namespace, buildLabels() and buildPodAnnotations(),
//     getVolumes(), scheduler_name, service_account,
//     automount_service_account_token, RestartPolicy Never, node_selector,
//     getPodTolerations() (node_tolerations), init containers, build, helper
//     and service containers, pod_termination_grace_period_seconds,
//     image_pull_secrets (prepareImagePullSecrets), pod_security_context,
//     host_aliases, dns_policy, dns_config, runtime_class_name,
//     priority_class_name and the pod-level resources (not the affinity,
//     which the scheduler weighs, not admission);
//   - buildContainer: each container's image, ImagePullPolicy (the first of
//     pull_policy), Stdin, its volume mounts (getVolumeMounts: the runner's
//     scripts and logs emptyDirs, every [runners.kubernetes.volumes] mount, and
//     "repo" at the builds directory unless a volume is mounted there);
//   - getHelperImage: helper_image, else the helper image of the runner's
//     version (helpers/container/helperimage/linux_info.go).
//
// What a job brings is left out or stands in: the job's image (config.toml's
// image, else the helper image, which every job's pod carries anyway), its
// project and job IDs (0), its variables (no env: none is sent), the
// commands, and values that name a variable ($CI_…), which only a job
// expands. Notes say which.

// Runner label and annotation keys (kubernetes.go, v19.3.0:
// runnerLabelNamespace = "runner.gitlab.com").
const runnerLabelNamespace = "runner.gitlab.com"

// runnerLabelNamespacePattern is the runner's own (kubernetes.go, v19.3.0):
// pod_labels may not set a key of the runner.gitlab.com namespace.
var runnerLabelNamespacePattern = regexp.MustCompile(`(?i)(^|.*\.)` + regexp.QuoteMeta(runnerLabelNamespace) + `(\/.*|$)`)

// DefaultHelperImageName is the helper image the runner picks with
// helper_image unset (helpers/container/helperimage/info.go, v19.3.0).
const DefaultHelperImageName = "registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper"

// Created is the job pod the runner would send, and what of it only a job
// decides.
type Created struct {
	Pod *corev1.Pod
	// Notes say where the pod stands in for a job's values, or leaves a
	// setting out: evidence beside a verdict on it.
	Notes []string
}

// AsCreated is the pod the Kubernetes executor of r sends for a job, in
// namespace ns, with the helper image of runner version (the runner's own;
// "" when unknown). It sets GenerateName where the runner sets a name of the
// same prefix and a random suffix: the apiserver then names it, and no
// object of the namespace can collide with it.
func AsCreated(r *runnerconfig.Runner, ns, version string) (*Created, error) {
	pod, err := For(r, Configured)
	if err != nil {
		return nil, err
	}
	k := r.Kubernetes
	if k == nil {
		k = &runnerconfig.Kubernetes{}
	}
	c := &Created{Pod: pod}
	legacy, _ := runnerconfig.FeatureFlag(r, runnerconfig.FFUseLegacyKubernetesExecutionStrategy)
	dumb, _ := runnerconfig.FeatureFlag(r, "FF_USE_DUMB_INIT_WITH_KUBERNETES_EXECUTOR")
	if adv, _ := runnerconfig.FeatureFlag(r, "FF_USE_ADVANCED_POD_SPEC_CONFIGURATION"); adv && len(k.PodSpec) > 0 {
		c.note("the [[runners.kubernetes.pod_spec]] patches are not applied")
	}

	unique := ProjectUniqueName()
	pod.ObjectMeta = metav1.ObjectMeta{
		GenerateName: generateName(unique),
		Namespace:    ns,
		Labels:       c.labels(r, k, unique),
		Annotations:  c.annotations(k),
	}

	helper := c.helperImage(k, version)
	build := k.Image
	if build == "" || hasVariable(build) {
		c.note("config.toml names no image every job uses: the build container carries the helper image")
		build = helper
	}
	policy := pullPolicy(k.PullPolicy)
	mounts := c.mounts(k, legacy, dumb)
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			ct := &cs[i]
			switch ct.Name {
			case Build:
				ct.Image = build
			case Helper, InitPermissions:
				ct.Image = helper
			}
			ct.ImagePullPolicy = policy
			ct.VolumeMounts = mounts
			if ct.Name != InitPermissions {
				ct.Stdin = true
			}
		}
	}
	for i, s := range k.Services {
		ct := &pod.Spec.Containers[2+i]
		if hasVariable(s.Name) || s.Name == "" {
			c.note(fmt.Sprintf("service %d names its image with a variable: it carries the helper image", i))
			ct.Image = helper
		}
	}

	spec := &pod.Spec
	spec.Volumes = c.volumes(k, legacy, dumb)
	spec.SchedulerName = k.SchedulerName
	spec.AutomountServiceAccountToken = k.AutomountServiceAccountToken
	spec.RestartPolicy = corev1.RestartPolicyNever
	spec.NodeSelector = k.NodeSelector
	spec.Tolerations = tolerations(k.NodeTolerations)
	spec.TerminationGracePeriodSeconds = k.PodTerminationGracePeriodSeconds
	spec.HostAliases = hostAliases(k.HostAliases)
	if k.Affinity.NodeAffinity != nil || k.Affinity.PodAffinity != nil || k.Affinity.PodAntiAffinity != nil {
		// The scheduler weighs it, not admission; and a bundle redacts its
		// selectors' "key" values, so a replayed dry run would send
		// another pod than the live one did.
		c.note("the affinity is not sent")
	}
	spec.DNSPolicy = c.dnsPolicy(k.DNSPolicy)
	spec.DNSConfig = dnsConfig(k.DNSConfig)
	spec.RuntimeClassName = k.RuntimeClassName
	spec.PriorityClassName = k.PriorityClassName
	c.note("the job's own values stand in as project 0, job 0, no variables and no commands; " + TokenStandIn + " for the token's short form")
	return c, nil
}

func (c *Created) note(s string) { c.Notes = append(c.Notes, s) }

// TokenStandIn stands where the runner writes its token's short form
// (helpers.ShortenToken, helpers/shorten_token.go, v19.3.0: the token
// without its known prefixes, its first 9 characters) in the pod's name and
// its manager.runner.gitlab.com/id-short label. It is a piece of the
// runner's secret, which a bundle redacts: a dry run that sent it would be
// another request on replay, and no policy weighs it.
const TokenStandIn = "dryrun"

// ProjectUniqueName is Build.ProjectUniqueName (common/build.go, v19.3.0)
// for project 0 and concurrency slot 0, the token's short form standing in
// as TokenStandIn: "runner-dryrun-project-0-concurrent-0", made RFC 1123
// compatible (helpers/dns MakeRFC1123Compatible).
func ProjectUniqueName() string {
	return rfc1123(fmt.Sprintf("runner-%s-project-%d-concurrent-%d", TokenStandIn, 0, 0))
}

var (
	notRFC1123      = regexp.MustCompile(`[^-a-z0-9]`)
	notRFC1123Start = regexp.MustCompile(`^[^a-z0-9]+`)
)

func rfc1123(name string) string {
	name = strings.ToLower(name)
	name = notRFC1123.ReplaceAllString(name, "")
	name = notRFC1123Start.ReplaceAllString(name, "")
	if len(name) > 63 {
		name = name[:63]
	}
	return name
}

// generateName is generateNameForK8sResources's prefix: the pattern cut
// to leave room for "-" and the 8-character suffix (k8sResourcesNameMaxLength
// 63, k8sResourcesNameSuffixLength 8), then the "-" the suffix follows.
func generateName(pattern string) string {
	if len(pattern) > 63-8-1 {
		pattern = pattern[:63-8-1]
	}
	return pattern + "-"
}

// SanitizeLabel is the runner's sanitizeLabel (executors/kubernetes/util.go,
// v19.3.0).
func SanitizeLabel(value string) string {
	value = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, value)
	value = strings.Trim(value, "-_.")
	if len(value) > 63 {
		value = value[:63]
	}
	return strings.Trim(value, "-_.")
}

// labels is buildLabels with a job's values standing in.
func (c *Created) labels(r *runnerconfig.Runner, k *runnerconfig.Kubernetes, unique string) map[string]string {
	l := map[string]string{
		"pod": SanitizeLabel(unique),
		"project." + runnerLabelNamespace + "/id":             "0",
		"project." + runnerLabelNamespace + "/namespace-id":   "0",
		"project." + runnerLabelNamespace + "/name":           "doctor-dry-run",
		"project." + runnerLabelNamespace + "/namespace":      "doctor",
		"project." + runnerLabelNamespace + "/root-namespace": "doctor",
		"job." + runnerLabelNamespace + "/pod":                SanitizeLabel(unique),
		"manager." + runnerLabelNamespace + "/name":           SanitizeLabel(r.Name),
		"manager." + runnerLabelNamespace + "/id-short":       TokenStandIn,
	}
	for key, val := range k.PodLabels {
		if runnerLabelNamespacePattern.MatchString(key) {
			continue // the runner does not set it either
		}
		if hasVariable(val) {
			c.note(fmt.Sprintf("pod label %s names a variable: it is sent as the runner sanitizes it unexpanded", key))
		}
		l[key] = SanitizeLabel(val)
	}
	return l
}

// annotations is buildPodAnnotations with a job's values standing in.
func (c *Created) annotations(k *runnerconfig.Kubernetes) map[string]string {
	a := map[string]string{
		"job." + runnerLabelNamespace + "/id":         "0",
		"job." + runnerLabelNamespace + "/url":        "",
		"job." + runnerLabelNamespace + "/sha":        "",
		"job." + runnerLabelNamespace + "/before_sha": "",
		"job." + runnerLabelNamespace + "/ref":        "",
		"job." + runnerLabelNamespace + "/name":       "",
		"job." + runnerLabelNamespace + "/timeout":    "1h0m0s",
		"project." + runnerLabelNamespace + "/id":     "0",
	}
	for key, val := range k.PodAnnotations {
		a[key] = val
	}
	return a
}

// helperImage is getHelperImage: helper_image with the runner's version
// for ${CI_RUNNER_VERSION}, else the default of the runner's version
// ("<name>:<flavor->x86_64-v<version>", the Linux default).
func (c *Created) helperImage(k *runnerconfig.Kubernetes, version string) string {
	tag := "latest"
	if m := versionPrefix.FindString(version); m != "" {
		tag = "v" + m
	}
	if k.HelperImage != "" {
		img := k.HelperImage
		for _, v := range []string{"${CI_RUNNER_VERSION}", "$CI_RUNNER_VERSION"} {
			img = strings.ReplaceAll(img, v, strings.TrimPrefix(tag, "v"))
		}
		return img
	}
	flavor := ""
	if k.HelperImageFlavor != "" && k.HelperImageFlavor != "alpine" {
		flavor = k.HelperImageFlavor + "-"
	}
	if version == "" {
		c.note("the runner's version is unknown: the helper image's tag says latest")
	}
	return DefaultHelperImageName + ":" + flavor + "x86_64-" + tag
}

var versionPrefix = regexp.MustCompile(`^[0-9]*\.[0-9]*\.[0-9]*`)

// hasVariable says whether a value names a variable a job expands.
func hasVariable(s string) bool { return strings.Contains(s, "$") }

// pullPolicy is the first of pull_policy, as the pull manager starts with
// it (common/config.go GetPullPolicies, executors/kubernetes/pull).
func pullPolicy(p runnerconfig.StringOrArray) corev1.PullPolicy {
	if len(p) == 0 {
		return ""
	}
	switch p[0] {
	case "always":
		return corev1.PullAlways
	case "never":
		return corev1.PullNever
	case "if-not-present":
		return corev1.PullIfNotPresent
	}
	return corev1.PullPolicy(p[0])
}

// baseDir is the executor's baseDir for project 0 and job 0.
func baseDir(def, configured string) string {
	base := def
	if configured != "" {
		base = strings.TrimRight(configured, `/\`) + def
	}
	return base + "-0-0"
}

// buildsDir is the default builds directory of the Kubernetes executor
// (AbstractExecutor.RootDir with builds_dir unset: /builds).
const buildsDir = "/builds"

// volumes is getVolumes: getVolumesForConfig, then repo, scripts and logs.
func (c *Created) volumes(k *runnerconfig.Kubernetes, legacy, dumb bool) []corev1.Volume {
	var out []corev1.Volume
	v := k.Volumes
	for _, h := range v.HostPaths {
		path := h.HostPath
		if path == "" {
			path = h.MountPath
		}
		out = append(out, corev1.Volume{Name: h.Name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path}}})
	}
	for _, s := range v.Secrets {
		out = append(out, corev1.Volume{Name: s.Name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: s.Name, Items: items(s.Items)}}})
	}
	seen := map[string]bool{}
	for _, p := range v.PVCs {
		if seen[p.Name] {
			continue
		}
		seen[p.Name] = true
		if hasVariable(p.Name) {
			c.note(fmt.Sprintf("the PersistentVolumeClaim volume %s names a variable: it is left out", p.Name))
			continue
		}
		out = append(out, corev1.Volume{Name: p.Name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: p.Name}}})
	}
	for _, m := range v.ConfigMaps {
		out = append(out, corev1.Volume{Name: m.Name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: m.Name}, Items: items(m.Items)}}})
	}
	for _, e := range v.EmptyDirs {
		src := &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMedium(e.Medium)}
		if e.SizeLimit != "" {
			if q, err := resource.ParseQuantity(e.SizeLimit); err == nil {
				src.SizeLimit = &q
			} else {
				c.note(fmt.Sprintf("empty_dir %s's size_limit does not parse: it is left out", e.Name))
			}
		}
		out = append(out, corev1.Volume{Name: e.Name, VolumeSource: corev1.VolumeSource{EmptyDir: src}})
	}
	for _, s := range v.CSIs {
		src := &corev1.CSIVolumeSource{Driver: s.Driver, ReadOnly: &s.ReadOnly, VolumeAttributes: s.VolumeAttributes}
		if s.FSType != "" {
			src.FSType = &s.FSType
		}
		out = append(out, corev1.Volume{Name: s.Name, VolumeSource: corev1.VolumeSource{CSI: src}})
	}
	for _, n := range v.NFSVolumes {
		out = append(out, corev1.Volume{Name: n.Name, VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: n.Server, Path: n.Path, ReadOnly: n.ReadOnly}}})
	}
	emptyDir := func(name string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	}
	if !mountedAt(k, buildsDir) {
		out = append(out, emptyDir("repo"))
	}
	if dumb || !legacy {
		out = append(out, emptyDir("scripts"))
	}
	if !legacy {
		out = append(out, emptyDir("logs"))
	}
	return out
}

func items(m map[string]string) []corev1.KeyToPath {
	var out []corev1.KeyToPath
	for _, key := range sortedKeys(m) {
		out = append(out, corev1.KeyToPath{Key: key, Path: m[key]})
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}

// mounts is getVolumeMounts.
func (c *Created) mounts(k *runnerconfig.Kubernetes, legacy, dumb bool) []corev1.VolumeMount {
	var out []corev1.VolumeMount
	if dumb || !legacy {
		out = append(out, corev1.VolumeMount{Name: "scripts", MountPath: baseDir("/scripts", k.ScriptsBaseDir)})
	}
	if !legacy {
		out = append(out, corev1.VolumeMount{Name: "logs", MountPath: baseDir("/logs", k.LogsBaseDir)})
	}
	add := func(name, path, sub string, ro bool, prop *string) {
		if hasVariable(path) || hasVariable(sub) || hasVariable(name) {
			c.note(fmt.Sprintf("the mount of volume %s names a variable: it is left out", name))
			return
		}
		out = append(out, corev1.VolumeMount{Name: name, MountPath: path, SubPath: sub, ReadOnly: ro, MountPropagation: (*corev1.MountPropagationMode)(prop)})
	}
	v := k.Volumes
	for _, m := range v.HostPaths {
		add(m.Name, m.MountPath, m.SubPath, m.ReadOnly, m.MountPropagation)
	}
	for _, m := range v.Secrets {
		add(m.Name, m.MountPath, m.SubPath, m.ReadOnly, nil)
	}
	for _, m := range v.PVCs {
		add(m.Name, m.MountPath, m.SubPath, m.ReadOnly, m.MountPropagation)
	}
	for _, m := range v.ConfigMaps {
		add(m.Name, m.MountPath, m.SubPath, m.ReadOnly, nil)
	}
	for _, m := range v.EmptyDirs {
		add(m.Name, m.MountPath, m.SubPath, false, m.MountPropagation)
	}
	for _, m := range v.CSIs {
		add(m.Name, m.MountPath, m.SubPath, m.ReadOnly, nil)
	}
	for _, m := range v.NFSVolumes {
		add(m.Name, m.MountPath, m.SubPath, m.ReadOnly, nil)
	}
	if !mountedAt(k, buildsDir) {
		out = append(out, corev1.VolumeMount{Name: "repo", MountPath: buildsDir})
	}
	return out
}

// mountedAt says whether a [runners.kubernetes.volumes] mount is at path
// (isDefaultBuildsDirVolumeRequired).
func mountedAt(k *runnerconfig.Kubernetes, path string) bool {
	v := k.Volumes
	var paths []string
	for _, m := range v.HostPaths {
		paths = append(paths, m.MountPath)
	}
	for _, m := range v.Secrets {
		paths = append(paths, m.MountPath)
	}
	for _, m := range v.PVCs {
		paths = append(paths, m.MountPath)
	}
	for _, m := range v.ConfigMaps {
		paths = append(paths, m.MountPath)
	}
	for _, m := range v.EmptyDirs {
		paths = append(paths, m.MountPath)
	}
	for _, m := range v.CSIs {
		paths = append(paths, m.MountPath)
	}
	for _, m := range v.NFSVolumes {
		paths = append(paths, m.MountPath)
	}
	for _, p := range paths {
		if p == path {
			return true
		}
	}
	return false
}

// tolerations is getPodTolerations: "key=value" is Equal, "key" Exists, the
// map's value the effect. The runner ranges over the map; here it is sorted,
// so the same config sends the same pod.
func tolerations(m map[string]string) []corev1.Toleration {
	var out []corev1.Toleration
	for _, kv := range sortedKeys(m) {
		t := corev1.Toleration{Key: kv, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffect(m[kv])}
		if key, value, ok := strings.Cut(kv, "="); ok {
			t.Key, t.Value, t.Operator = key, value, corev1.TolerationOpEqual
		}
		out = append(out, t)
	}
	return out
}

func hostAliases(in []runnerconfig.HostAlias) []corev1.HostAlias {
	var out []corev1.HostAlias
	for _, h := range in {
		out = append(out, corev1.HostAlias{IP: h.IP, Hostnames: h.Hostnames})
	}
	return out
}

// dnsPolicy is KubernetesDNSPolicy.Get (common/config.go, v19.3.0): blank
// is ClusterFirst; an unknown one the runner warns about and falls back to
// the cluster's default.
func (c *Created) dnsPolicy(p string) corev1.DNSPolicy {
	switch p {
	case "":
		return corev1.DNSClusterFirst
	case "none":
		return corev1.DNSNone
	case "default":
		return corev1.DNSDefault
	case "cluster-first":
		return corev1.DNSClusterFirst
	case "cluster-first-with-host-net":
		return corev1.DNSClusterFirstWithHostNet
	}
	c.note(fmt.Sprintf("dns_policy %q is none the runner knows: it falls back to the cluster's default", p))
	return ""
}

// dnsConfig is KubernetesDNSConfig.Get: nil when nothing is set.
func dnsConfig(d runnerconfig.DNSConfig) *corev1.PodDNSConfig {
	if len(d.Nameservers) == 0 && len(d.Options) == 0 && len(d.Searches) == 0 {
		return nil
	}
	out := &corev1.PodDNSConfig{Nameservers: d.Nameservers, Searches: d.Searches}
	for _, o := range d.Options {
		out.Options = append(out.Options, corev1.PodDNSConfigOption{Name: o.Name, Value: o.Value})
	}
	return out
}

// Describe is the pod as evidence names it: its name's prefix, service
// account, containers and images, and the scheduling settings admission
// plugins weigh.
func (c *Created) Describe() string {
	p := c.Pod
	sa := p.Spec.ServiceAccountName
	if sa == "" {
		sa = "the namespace's default"
	}
	parts := []string{fmt.Sprintf("generateName %s in %s, service account %s", p.GenerateName, p.Namespace, sa)}
	var cs []string
	for _, ct := range AllContainers(p) {
		cs = append(cs, ct.Name+" "+ct.Image)
	}
	parts = append(parts, "containers "+strings.Join(cs, ", "))
	if len(p.Spec.NodeSelector) > 0 {
		var sel []string
		for _, k := range sortedKeys(p.Spec.NodeSelector) {
			sel = append(sel, k+"="+p.Spec.NodeSelector[k])
		}
		parts = append(parts, "node selector "+strings.Join(sel, ","))
	}
	if n := len(p.Spec.Tolerations); n > 0 {
		parts = append(parts, fmt.Sprintf("%d tolerations", n))
	}
	if p.Spec.PriorityClassName != "" {
		parts = append(parts, "priority class "+p.Spec.PriorityClassName)
	}
	if r := p.Spec.RuntimeClassName; r != nil {
		parts = append(parts, "runtime class "+*r)
	}
	return strings.Join(parts, "; ")
}
