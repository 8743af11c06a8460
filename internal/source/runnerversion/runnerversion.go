// Package runnerversion finds which gitlab-runner version is installed
// without running it: from the binary's Go build information and data
// (FromBinary), or from a container image reference (FromImage).
//
// # How gitlab-runner stamps its version
//
// The runner's Makefile (tags v19.2.1 and v19.3.0 alike) links the version
// into package common with -X:
//
//	PKG = gitlab.com/gitlab-org/$(PACKAGE_NAME)
//	COMMON_PACKAGE_NAMESPACE = $(PKG)/common
//	GO_LDFLAGS ?= -X $(COMMON_PACKAGE_NAMESPACE).NAME=$(APP_NAME) -X $(COMMON_PACKAGE_NAMESPACE).VERSION=$(VERSION) \
//	              -X $(COMMON_PACKAGE_NAMESPACE).BRANCH=$(BRANCH) \
//	              -w
//
// where VERSION comes from ci/version: the tag without its "v" when HEAD is
// exactly a release tag ("19.3.0", "19.3.0-rc1"), else
// "<VERSION file>~pre.<commits since last tag>.g<8-hex revision>". The
// release job (.gitlab/ci/build.gitlab-ci.yml: make … runner-bin
// runner-bin-fips) builds, per Makefile.build.mk,
//
//	GOOS="$(GOOS)" GOARCH="$(GOARCH)" go build -trimpath -ldflags "$(GO_LDFLAGS)" -o $@
//
// and the linux/amd64 FIPS binary with the same GO_LDFLAGS but without
// -trimpath.
//
// Up to v17.8 the Makefile also stamped common.REVISION and common.BUILT;
// since v17.9 (commit 383c22ffc, "Use embedded VCS information rather than add
// manually") common/version.go fills Revision from the build setting
// vcs.revision (first 8 characters), BuiltAt from vcs.time, and, when VERSION
// is empty, Version from the main module's version (debug.ReadBuildInfo).
// That last one is never a release number: the module path has no /v19
// suffix, so Go stamps a v0.0.0-<time>-<revision> pseudo-version, which
// FromBinary does not take for a version.
//
// # What FromBinary reads
//
// -trimpath makes cmd/go leave -ldflags out of the recorded build settings
// (go.dev/issue/52372), so for official binaries the build information
// alone does not have the version. In order:
//
//  1. the "-ldflags" build setting (debug/buildinfo), for binaries built
//     without -trimpath: the last -X .../common.VERSION=value;
//  2. the ELF symbol table: -w drops DWARF but keeps .symtab, so the symbol
//     gitlab.com/gitlab-org/gitlab-runner/common.VERSION gives the address of
//     the variable's string header (pointer, length), which points at the
//     linker-stamped bytes;
//  3. without a symbol table (a binary stripped with -s or strip(1)): a
//     bounded scan. A -X value is stored as plain string data in .rodata with
//     no name near it, but the linker ends it with a NUL (cmd/link's
//     addstrdata uses SymbolBuilder.Addstring), which Go string literals lack
//     on amd64, arm64, arm, 386, ppc64le and riscv64. So the scan looks in
//     .rodata for NUL-terminated strings shaped like ci/version's output and
//     keeps those whose (address, length) string header is stored in .data
//     or .noptrdata, as a statically initialised string variable's is. It
//     reads at most 256 MiB, 1 MiB at a time, and answers only if exactly one
//     value qualifies: two make it fail rather than guess. It is a heuristic:
//     a version-like string variable whose literal happens to be followed by
//     a zero byte qualifies too, and on s390x, where the compiler's literals
//     are NUL-separated, any such variable does;
//  4. the main module's version from the build information, what the
//     runner itself falls back to when VERSION is empty, if it is neither
//     "(devel)" nor a pseudo-version.
//
// Steps 3 and 4 are taken only when the main module is gitlab-runner.
package runnerversion

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/socialwebcomputer/doctor/internal/text/lazyre"
)

// Module is gitlab-runner's Go module path.
const Module = "gitlab.com/gitlab-org/gitlab-runner"

// Version is a runner version and where it was read.
type Version struct {
	// Version as the runner prints it in "gitlab-runner --version", without
	// a leading "v": "19.3.1", "19.4.0~pre.12.gd79f3e7b".
	Version string
	// Source says what was read: "buildinfo -ldflags of
	// /usr/bin/gitlab-runner", "image tag of registry…/runner:v19.3.1", ...
	Source string
	// Revision is the 8-hex git revision when the source has one, else "".
	Revision string
}

var (
	ErrNotRegular = errors.New("not a regular file")
	ErrNotGo      = errors.New("not a Go binary")
	ErrNoVersion  = errors.New("no gitlab-runner version found")
)

// FileError names the host path (not the root-prefixed one).
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// imageVersions find a release version in an image tag, "v" first:
// "v19.3.1", "alpine-v19.3.1", "alpine3.21-v19.3.1", "v19.3.0-rc1", then
// "19.3.1".
var imageVersions = []func() *regexp.Regexp{
	lazyre.MustCompile(`(?:^|[-_])v(\d+\.\d+\.\d+(?:-rc\d+)?)(?:$|[-_])`),
	lazyre.MustCompile(`(?:^|[-_])(\d+\.\d+\.\d+(?:-rc\d+)?)(?:$|[-_])`),
}

// FromImage reads the version from a container image reference's tag:
// "registry.deckhouse.ru/deckhouse/ee/packages/code/images/runner:v19.3.1"
// gives 19.3.1. A registry port ("registry:5000/runner:v19.3.1") is not a
// tag, a digest ("@sha256:…") is ignored when a tag is there, and a
// reference with no tag, only a digest, or a tag without a version
// ("latest", "alpine", "bleeding") is an error: it names no version.
func FromImage(ref string) (Version, error) {
	r := strings.TrimSpace(ref)
	if r == "" {
		return Version{}, errors.New("empty image reference")
	}
	name, digest, _ := strings.Cut(r, "@")
	tag := ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	if name == "" || strings.ContainsAny(name, " \t") {
		return Version{}, fmt.Errorf("image reference %q: malformed", ref)
	}
	switch {
	case tag == "" && digest != "":
		return Version{}, fmt.Errorf("image reference %q: pinned by digest only, no tag to read a version from", ref)
	case tag == "":
		return Version{}, fmt.Errorf("image reference %q: no tag (means latest), which names no version", ref)
	}
	for _, re := range imageVersions {
		if m := re().FindStringSubmatch(tag); m != nil {
			return Version{Version: m[1], Source: "image tag of " + r}, nil
		}
	}
	return Version{}, fmt.Errorf("image reference %q: tag %q names no version", ref, tag)
}
