package helperimage

import (
	"regexp"
	"strings"
)

// GitLabRegistryName is the default helper image's name
// (helpers/container/helperimage/info.go, gitlab-runner v19.3.0).
const GitLabRegistryName = "registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper"

// DeckhouseHelper is the Deckhouse Code runner-helper image, "built for
// linux/amd64 only" (../shared/spec/deckhouse-code-runners.txt).
const DeckhouseHelper = "registry.deckhouse.ru/deckhouse/ee/packages/code/images/runner-helper"

// versionPrefix is helperimage.Version's regexp (info.go, v19.3.0): the tag
// carries "v" and the first three numbers of the runner's version.
var versionPrefix = regexp.MustCompile(`^[0-9]*\.[0-9]*\.[0-9]*`)

// TagVersion is helperimage.Version: "v19.3.0" for "19.3.0~pre.1.gabc",
// "latest" when the version has no three numbers.
func TagVersion(v string) string {
	if m := versionPrefix.FindString(v); m != "" {
		return "v" + m
	}
	return "latest"
}

// tagArchs maps the architecture token of a gitlab-runner-helper tag to the
// Go/Kubernetes architecture name: linuxInfo.architecture
// (helpers/container/helperimage/linux_info.go, v19.3.0) spells amd64
// x86_64, aarch64 arm64 and armv6l/armv7l arm, and keeps the others.
var tagArchs = map[string]string{"x86_64": "amd64", "arm64": "arm64", "arm": "arm", "s390x": "s390x", "ppc64le": "ppc64le", "riscv64": "riscv64", "loong64": "loong64"}

// toTagArch is the reverse, for the default image's tag.
func toTagArch(arch string) string {
	switch arch {
	case "amd64":
		return "x86_64"
	case "aarch64":
		return "arm64"
	case "armv6l", "armv7l":
		return "arm"
	}
	return arch
}

// DefaultImage is the helper image the runner picks with helper_image
// unset (linux_info.go Create, alpine flavor: no flavor prefix):
// "<name>:<arch>-v<version>".
func DefaultImage(arch, version string) string {
	return GitLabRegistryName + ":" + toTagArch(arch) + "-" + TagVersion(version)
}

// ImageArch says which architecture an image reference is built for, when
// its name or tag says: the Deckhouse images are amd64 only, and
// gitlab-runner-helper tags name theirs ("x86_64-v19.3.0",
// "ubuntu-arm64-v19.3.0"). "" when nothing says (a multi-arch image).
func ImageArch(ref string) string {
	name, tag := splitRef(ref)
	if name == DeckhouseHelper || strings.HasSuffix(name, "/code/images/runner-helper") {
		return "amd64"
	}
	if !strings.HasSuffix(name, "gitlab-runner-helper") {
		return ""
	}
	for _, tok := range strings.Split(tag, "-") {
		if a, ok := tagArchs[tok]; ok {
			return a
		}
	}
	return ""
}

// splitRef is a reference's name and tag (no digest, no registry port).
func splitRef(ref string) (name, tag string) {
	name, _, _ = strings.Cut(strings.TrimSpace(ref), "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		return name[:i], name[i+1:]
	}
	return name, ""
}

// followsRunner reports whether helper_image takes the runner's own version
// from a variable: the executors expand it with the job's variables
// (ExpandValue, executors/docker/docker.go getHelperImage and
// executors/kubernetes/kubernetes.go, v19.3.0), where CI_RUNNER_VERSION and
// CI_RUNNER_REVISION are the runner's (common/version.go).
func followsRunner(ref string) bool {
	return strings.Contains(ref, "CI_RUNNER_VERSION") || strings.Contains(ref, "CI_RUNNER_REVISION")
}
