package docker

import (
	"strconv"
	"strings"
)

// ClientAPI is the Docker client a gitlab-runner release is built with,
// and the API versions it speaks: the module its go.mod requires at the
// release's tag, and that module's own constants at its version.
type ClientAPI struct {
	Since   string // the first runner release with it: "17.5.0"
	Module  string // "github.com/docker/docker"
	Version string // "v25.0.6+incompatible"
	// API is the version the client sends: api/common.go DefaultVersion
	// (github.com/docker/docker), client/client.go MaxAPIVersion
	// (github.com/moby/moby/client). The runner negotiates (every release
	// from v15.0.0: client.WithAPIVersionNegotiation, or the moby client's
	// default), which only lowers it to an older daemon's ApiVersion; a
	// daemon whose MinAPIVersion is above it refuses the client.
	API string
	// MinAPI is the oldest daemon API the client accepts (moby client's
	// MinAPIVersion, "API version %s is not supported by this client: the
	// minimum supported API version is %s"); "" for the docker/docker
	// clients, which have none.
	MinAPI string
}

// clientAPIs are gitlab-runner's Docker clients, oldest first: from its
// go.mod at every release tag v15.0.0 to v19.3.0 (the lines of
// testdata/runner-docker-client.txt; the requirement changes only at the
// releases below, and no tag replaces the module), and from moby's source
// at the module's tag (testdata/moby-client-api.txt).
var clientAPIs = []ClientAPI{
	{"15.0.0", "github.com/docker/docker", "v20.10.12+incompatible", "1.41", ""},
	{"15.6.0", "github.com/docker/docker", "v20.10.17+incompatible", "1.41", ""},
	{"15.10.0", "github.com/docker/docker", "v23.0.1+incompatible", "1.42", ""},
	{"16.0.0", "github.com/docker/docker", "v23.0.6+incompatible", "1.42", ""},
	{"16.3.0", "github.com/docker/docker", "v24.0.5+incompatible", "1.43", ""},
	{"16.6.0", "github.com/docker/docker", "v24.0.7+incompatible", "1.43", ""},
	{"16.11.0", "github.com/docker/docker", "v24.0.9+incompatible", "1.43", ""},
	{"17.5.0", "github.com/docker/docker", "v25.0.6+incompatible", "1.44", ""},
	{"17.11.0", "github.com/docker/docker", "v27.5.0+incompatible", "1.47", ""},
	{"18.6.0", "github.com/docker/docker", "v28.0.0+incompatible", "1.48", ""},
	{"18.7.0", "github.com/docker/docker", "v28.2.2+incompatible", "1.50", ""},
	{"18.9.0", "github.com/docker/docker", "v28.5.2+incompatible", "1.51", ""},
	{"19.2.0", "github.com/moby/moby/client", "v0.5.0", "1.55", "1.40"},
	{"19.3.0", "github.com/moby/moby/client", "v0.5.1", "1.55", "1.40"},
}

// NewestClientRelease is the newest runner release whose go.mod doctor
// read: a newer runner is taken to speak at least what it speaks.
const NewestClientRelease = "19.3.0"

// ClientAPIOf is the Docker client of gitlab-runner version v ("19.3.1",
// "v17.4.2", "19.4.0~pre.3.gabc"); false for a release older than v15.0.0
// or a version that does not parse.
func ClientAPIOf(v string) (ClientAPI, bool) {
	x, ok := parseRelease(v)
	if !ok {
		return ClientAPI{}, false
	}
	var out ClientAPI
	found := false
	for _, c := range clientAPIs {
		s, _ := parseRelease(c.Since)
		if !releaseLess(x, s) {
			out, found = c, true
		}
	}
	return out, found
}

func parseRelease(v string) ([3]int, bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 3 {
		return [3]int{}, false
	}
	var out [3]int
	for i, p := range parts {
		end := 0
		for end < len(p) && p[end] >= '0' && p[end] <= '9' {
			end++
		}
		if end == 0 {
			return [3]int{}, false
		}
		out[i], _ = strconv.Atoi(p[:end])
	}
	return out, true
}

func releaseLess(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// APILess compares two Docker API versions ("1.43" < "1.44"), as moby's
// versions.LessThan does: dot-separated integers, missing parts zero.
func APILess(a, b string) bool {
	as, bs := strings.Split(strings.TrimPrefix(a, "v"), "."), strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// ClientAPIs lists gitlab-runner's Docker clients, oldest first.
func ClientAPIs() []ClientAPI { return append([]ClientAPI(nil), clientAPIs...) }
