// Package helperimage checks the helper image a Docker or Kubernetes runner
// starts beside every job: that helper_image carries the runner's own
// version, and that it is built for the architecture of the daemon or the
// nodes that run it.
package helperimage

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	corev1 "k8s.io/api/core/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/docker"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/source/runnerversion"
)

// ID names the check.
const ID = "helper-image"

var Check = &checks.Check{
	ID:       ID,
	Title:    "The helper image matches the runner's version and the architecture that runs it",
	Severity: checks.Warning,
	Doc: checks.Doc{
		Cause: "The Docker and Kubernetes executors start a helper container beside every job (it clones the repository " +
			"and uploads artifacts and cache). With helper_image unset the runner picks " + GitLabRegistryName +
			":<arch>-v<its version> from registry.gitlab.com; a helper_image set by hand stays at the version it names " +
			"when the runner is upgraded, and one built for another architecture than the Docker daemon or the nodes " +
			"cannot start at all. The Deckhouse runner-helper image is built for linux/amd64 only.",
		// executors/docker/docker.go getHelperImage, gitlab-runner v19.3.0:
		// e.BuildLogger.Println("Using helper image: ", imageNameFromConfig, " (overridden, default would be ", e.helperImageInfo, ")")
		Symptom: "Using helper image:  registry.deckhouse.ru/deckhouse/ee/packages/code/images/runner-helper:v19.2.0  (overridden, default would be  registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:x86_64-v19.3.1 )",
		Fix: checks.Steps{
			checks.Say("Set helper_image to the runner-helper image of the runner's own version, as the Deckhouse document does (the runner image's tag; " +
				"the runner expands ${CI_RUNNER_VERSION} to its own), in the executor's table of the runner's [[runners]] entry ([runners.docker] for Docker), " +
				"or leave it unset on nodes that reach registry.gitlab.com; run an amd64-only image only on amd64 nodes or daemons:"),
			checks.Toml("[runners.kubernetes]\nhelper_image = \"" + DeckhouseHelper + ":v${CI_RUNNER_VERSION}\""),
		},
		Verify: checks.Steps{checks.Sh("doctor run --only helper-image")},
		Patterns: []string{
			// executors/docker/docker.go getHelperImage, v19.3.0 (Println: the operands are spaced).
			"Using helper image: *(overridden, default would be *",
			// executors/kubernetes/kubernetes.go Prepare, v19.3.0 (debug level).
			"Using helper image: * (overridden, default would be *:*)",
		},
	},
	Requires: []checks.Node{configfacts.RunnerEntryFact, hostfacts.VersionFact, docker.DaemonFact, hostfacts.RunnerFact,
		checks.Optional(kubefacts.APIClientFact), checks.Optional(kubefacts.IdentityFact)},
	Executors: []string{checks.Docker, checks.Kubernetes},
	Run:       run,
}

// configured is the runner's helper_image and where it is set.
type configured struct {
	image, source, line string
	table               string // "docker" or "kubernetes"
}

func run(p *checks.Pass) error {
	e, ver := configfacts.RunnerEntryFact.Get(p), hostfacts.VersionFact.Get(p)
	c := configured{table: "kubernetes"}
	if checks.NormalizeExecutor(e.Runner.Executor) == checks.Docker {
		c.table = "docker"
		if e.Runner.Docker != nil {
			c.image = strings.TrimSpace(e.Runner.Docker.HelperImage)
		}
	} else {
		c.image = strings.TrimSpace(e.Kube().HelperImage)
	}
	if c.image != "" {
		c.source, c.line = e.At(c.table, "helper_image")
		c.line = strings.TrimSpace(c.line)
	}
	runArch, archEv, nodesBy, err := where(p, e)
	var unknown error
	if err != nil {
		unknown = err
	}

	if c.image == "" {
		return unset(p, e, ver, c, runArch, archEv, nodesBy, unknown)
	}
	cfgEv := checks.Evidence{Source: c.source, Detail: c.line}
	// doctor apart from the runner (its CronJob in the cluster) has no
	// binary to take the version from: with no architecture to compare
	// either, there is nothing to check here, which is not a failure to.
	noBinary := errors.Is(ver.Err, hostfacts.ErrNoRunnerBinary)
	if noBinary && runArch == "" && len(nodesBy) == 0 && unknown == nil {
		return checks.Skip("nothing to compare helper_image %s with here: no runner binary (doctor runs apart from the runner) and no node architectures", c.image)
	}
	if !followsRunner(c.image) && !noBinary {
		unknown = joinUnknown(unknown, versionFinding(p, e, ver, c, cfgEv))
	}
	if arch := ImageArch(c.image); arch != "" {
		archFinding(p, e, c.image, arch, runArch, archEv, nodesBy, cfgEv)
	}
	return unknown
}

// versionFinding compares helper_image's tag with the runner's version.
func versionFinding(p *checks.Pass, e *configfacts.RunnerEntry, ver *hostfacts.Version, c configured, cfgEv checks.Evidence) error {
	tagVer, terr := runnerversion.FromImage(c.image)
	if terr != nil {
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s's helper_image %s names no version (%v): it does not follow the runner's upgrades, and the helper "+
				"and the runner may differ in what they speak.", e.Label(), c.image, terr),
			Evidence: []checks.Evidence{cfgEv},
			Fix:      checks.Text(fmt.Sprintf("Pin helper_image to the runner's version tag%s, or use ${CI_RUNNER_VERSION} in it, in [runners.%s] of the runner's [[runners]] entry.", wantTag(ver), c.table)),
		})
		return nil
	}
	if ver.Err != nil || ver.Version.Version == "" {
		return fmt.Errorf("the runner's version is unknown (%v), so helper_image %s (%s) cannot be compared with it", ver.Err, c.image, TagVersion(tagVer.Version))
	}
	if TagVersion(tagVer.Version) == TagVersion(ver.Version.Version) {
		return nil
	}
	p.Report(checks.Finding{
		Cause: fmt.Sprintf("%s runs gitlab-runner %s, but its helper_image %s is %s: the helper of another release starts beside "+
			"every job.", e.Label(), ver.Version.Version, c.image, TagVersion(tagVer.Version)),
		Evidence: []checks.Evidence{cfgEv, {Source: ver.Version.Source, Detail: "gitlab-runner " + ver.Version.Version}},
		Fix: checks.Steps{checks.Say("In the runner's [[runners]] entry:"),
			helperImageTOML(c.table, retag(c.image, tagVer.Version, ver.Version.Version))},
	})
	return nil
}

// retag replaces the version in an image's tag with the runner's, in the
// tag's own spelling ("v19.3.1" or "19.3.1").
func retag(ref, old, runner string) string {
	name, tag := splitRef(ref)
	want := strings.TrimPrefix(TagVersion(runner), "v")
	return name + ":" + strings.Replace(tag, old, want, 1)
}

func wantTag(ver *hostfacts.Version) string {
	if ver.Err != nil || ver.Version.Version == "" {
		return ""
	}
	return " (" + TagVersion(ver.Version.Version) + ")"
}

// archFinding is an error when the image's architecture is none of the
// daemon's or of a node a job may land on.
func archFinding(p *checks.Pass, e *configfacts.RunnerEntry, image, arch, runArch string, archEv []checks.Evidence, nodesBy map[string][]string, cfgEv checks.Evidence) {
	if runArch != "" && runArch != arch {
		p.Report(checks.Finding{
			Severity: checks.Error,
			Cause: fmt.Sprintf("%s's helper image %s is built for linux/%s, but its Docker daemon runs %s: the helper container "+
				"cannot start, so every job fails.", e.Label(), image, arch, runArch),
			Evidence: append([]checks.Evidence{cfgEv}, archEv...),
			Fix:      checks.Text(fmt.Sprintf("Use a helper image built for %s (or a multi-arch one), or run this runner against an %s daemon.", runArch, arch)),
		})
		return
	}
	var others []string
	for a, nodes := range nodesBy {
		if a != arch {
			others = append(others, fmt.Sprintf("%s (%s)", a, strings.Join(nodes, ", ")))
		}
	}
	if len(others) == 0 {
		return
	}
	sort.Strings(others)
	p.Report(checks.Finding{
		Severity: checks.Error,
		Cause: fmt.Sprintf("%s's helper image %s is built for linux/%s, but jobs may land on nodes of %s: there the helper "+
			"container cannot start.", e.Label(), image, arch, strings.Join(others, "; ")),
		Evidence: append([]checks.Evidence{cfgEv}, archEv...),
		Fix: checks.Steps{checks.Say(fmt.Sprintf("Keep the jobs on %s nodes, in the runner's [[runners]] entry, or use a helper image built for every node's architecture:", arch)),
			archSelector(arch)},
	})
}

// unset judges the default helper image: for Kubernetes its architecture
// is amd64 unless node_selector or helper_image_autoset_arch_and_os says
// otherwise; and its registry is registry.gitlab.com, which is noted for a
// runner of the Deckhouse Code image, whose document sets helper_image to
// the runner-helper of registry.deckhouse.ru (a cluster that pulls from
// there may not reach registry.gitlab.com). For any other runner the
// default is the usual choice and nothing says it is out of reach.
func unset(p *checks.Pass, e *configfacts.RunnerEntry, ver *hostfacts.Version, c configured, runArch string, archEv []checks.Evidence, nodesBy map[string][]string, unknown error) error {
	version := ""
	if ver.Err == nil {
		version = ver.Version.Version
	}
	arch := runArch
	if c.table == "kubernetes" {
		arch = kubeDefaultArch(e)
	}
	image := GitLabRegistryName + ":<arch>-" + TagVersion(version)
	if arch != "" {
		image = DefaultImage(arch, version)
	}
	if c.table == "kubernetes" && arch != "" {
		cfgEv := checks.Evidence{Source: e.File.Path, Detail: "[runners.kubernetes] helper_image unset: the default " + image}
		archFinding(p, e, image, arch, "", archEv, nodesBy, cfgEv)
	}
	plugin, deckhouse := deckhouseImage(p.Env, hostfacts.RunnerFact.Get(p).Selected)
	if !deckhouse {
		return unknown // the default from registry.gitlab.com is what most runners use, and nothing says it is out of reach
	}
	p.Report(checks.Finding{
		Severity: checks.Info,
		Cause: fmt.Sprintf("%s runs from the Deckhouse Code runner image but sets no helper_image, so every job pulls %s from "+
			"registry.gitlab.com instead of the runner-helper image of registry.deckhouse.ru: nodes (or a daemon) that cannot reach "+
			"registry.gitlab.com fail every job at the helper container.", e.Label(), image),
		Evidence: append([]checks.Evidence{{Source: e.File.Path, Detail: "no helper_image in [runners." + c.table + "]"},
			{Source: plugin, Detail: "present: the runner runs from the Deckhouse Code runner image, whose registry is registry.deckhouse.ru"}}, archEv...),
		Fix: checks.Steps{checks.Say("Where registry.gitlab.com is not reachable, set helper_image to a reachable copy of the runner's version, as the Deckhouse document does, in the runner's [[runners]] entry:"),
			helperImageTOML(c.table, DeckhouseHelper+":"+versionOr(version))},
	})
	return unknown
}

// helperImageTOML is helper_image = image in the executor's table of the
// runner's entry ("docker": [runners.docker], else [runners.kubernetes]):
// the image reference is a TOML string the encoder writes, whatever it
// holds (it came from config.toml or the runner's version).
func helperImageTOML(table, image string) checks.Step {
	kv := fixcode.KV{Key: "helper_image", Value: image}
	t := fixcode.TOMLTable("runners.kubernetes", kv)
	if table == "docker" {
		t = fixcode.TOMLTable("runners.docker", kv)
	}
	return checks.Document(fixcode.TOML(t))
}

// archSelector is the node_selector that keeps a runner's jobs on arch's
// nodes: the key kubernetes.io/arch, which the encoder quotes, and arch
// (config.toml's node_selector, or an image's), a TOML string.
func archSelector(arch string) checks.Step {
	return checks.Document(fixcode.TOML(fixcode.TOMLTable("runners.kubernetes.node_selector", fixcode.KV{Key: corev1.LabelArchStable, Value: arch})))
}

func versionOr(v string) string {
	if v == "" {
		return "v${CI_RUNNER_VERSION}" // the runner expands it to its own version
	}
	return TagVersion(v)
}

// kubeDefaultArch is retrieveHelperImageConfig and prepareHelperImage
// (executors/kubernetes/kubernetes.go, v19.3.0): "amd64", replaced by
// node_selector's kubernetes.io/arch; helper_image_autoset_arch_and_os takes
// the runner's own architecture instead, which doctor does not read ("").
func kubeDefaultArch(e *configfacts.RunnerEntry) string {
	k := e.Kube()
	if a := k.NodeSelector[corev1.LabelArchStable]; a != "" {
		return a
	}
	if k.HelperImageAutosetArchAndOS {
		return ""
	}
	return "amd64"
}

// where is what runs the helper: the Docker daemon's architecture, or the
// architectures of the nodes a job of this runner may land on (node_selector
// applied), by architecture.
func where(p *checks.Pass, e *configfacts.RunnerEntry) (runArch string, ev []checks.Evidence, nodesBy map[string][]string, err error) {
	if checks.NormalizeExecutor(e.Runner.Executor) == checks.Docker {
		d := docker.DaemonFact.Get(p)
		if d.Probe != nil && d.Probe.Version != nil {
			v := d.Probe.Version
			return v.Arch, []checks.Evidence{{Source: "GET /version on " + d.Addr.Host, Detail: v.String()}}, nil, nil
		}
		return "", nil, nil, nil
	}
	id, api := kubefacts.IdentityFact.Get(p), kubefacts.APIClientFact.Get(p)
	if id == nil || api == nil || id.Err != nil {
		return "", nil, nil, nil // no authenticated API: api-auth says why
	}
	nodes, err := cluster.Nodes(p, api)
	if apierrors.IsForbidden(err) {
		// A namespaced identity (doctor's own CronJob, a runner's service
		// account) never lists nodes, as the node checks skip: the tag is
		// still compared, the architecture is not.
		return "", []checks.Evidence{{Source: "GET /api/v1/nodes", Detail: "not allowed for this identity: the nodes' architectures are not compared"}}, nil, nil
	}
	if err != nil {
		return "", nil, nil, fmt.Errorf("the nodes' architectures are unknown: %w", err)
	}
	sel := e.Kube().NodeSelector
	nodesBy = map[string][]string{}
	for i := range nodes {
		n := &nodes[i]
		if !matches(n, sel) {
			continue
		}
		a := n.Labels[corev1.LabelArchStable]
		if a == "" {
			a = n.Status.NodeInfo.Architecture
		}
		if a != "" {
			nodesBy[a] = append(nodesBy[a], n.Name)
		}
	}
	var archs []string
	for a, ns := range nodesBy {
		archs = append(archs, fmt.Sprintf("%s: %s", a, strings.Join(ns, ", ")))
	}
	sort.Strings(archs)
	if len(archs) > 0 {
		ev = []checks.Evidence{{Source: "GET /api/v1/nodes", Detail: "kubernetes.io/arch " + strings.Join(archs, "; ")}}
	}
	return "", ev, nodesBy, nil
}

func matches(n *corev1.Node, sel map[string]string) bool {
	for k, v := range sel {
		if n.Labels[k] != v {
			return false
		}
	}
	return true
}

func joinUnknown(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// deckhousePlugin is what tells the Deckhouse Code runner image from
// others: it carries "the fleeting-plugin-dvp plugin in /usr/local/bin"
// (../shared/spec/deckhouse-code-runners.txt, Runner images).
const deckhousePlugin = "/usr/local/bin/fleeting-plugin-dvp"

// deckhouseImage looks for the plugin in the runner's own filesystem
// (/proc/<pid>/root, for doctor beside its container) or under --root
// (doctor in the runner's pod), and names where it was found.
func deckhouseImage(env *hostio.Env, proc *hostfacts.Process) (string, bool) {
	paths := []string{deckhousePlugin}
	if proc != nil {
		paths = append([]string{fmt.Sprintf("/proc/%d/root%s", proc.PID, deckhousePlugin)}, paths...)
	}
	for _, p := range paths {
		if st, err := env.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, true
		}
	}
	return "", false
}
