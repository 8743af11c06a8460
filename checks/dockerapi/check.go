// Package dockerapi asks a Docker runner's daemon its API range (GET
// /version: ApiVersion and MinAPIVersion) and compares it with the API
// version the runner's own Docker client speaks: the client its release is
// built with (its go.mod at the release's tag), or the DOCKER_API_VERSION
// its environment pins. A client the daemon refuses fails every job; the
// finding quotes the daemon's own refusal, asked with that version.
package dockerapi

import (
	"fmt"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/docker"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/source/runnerversion"
)

// ID names the check.
const ID = "docker-api-version"

var Check = &checks.Check{
	ID:       ID,
	Title:    "The Docker daemon accepts the API version of the runner's Docker client",
	Severity: checks.Critical,
	Doc: checks.Doc{
		Cause: "The Docker executor's client speaks the newest API version of the Docker client library its release is built " +
			"with (gitlab-runner v16.3 to v17.4: 1.43, v17.5 to v17.10: 1.44, v19.2 and later: 1.55), lowered to the daemon's " +
			"ApiVersion when the daemon is older; DOCKER_API_VERSION in the runner's environment pins it instead. A daemon " +
			"refuses a client below its MinAPIVersion: Docker Engine 29 raised it to 1.44, so after an unattended daemon " +
			"upgrade every job of an older runner fails at its first request. A pinned version above the daemon's ApiVersion " +
			"is refused the same way, and the runner's moby client (v19.2 and later) refuses a daemon older than API 1.40.",
		// api/server/middleware/version.go (moby v20.10.24; daemon/server/middleware/version.go
		// in later releases), behind the client's "Error response from daemon: " and
		// executors/docker/docker.go's "getting docker info: %w" (gitlab-runner v19.3.0).
		Symptom: "ERROR: Job failed (system failure): getting docker info: Error response from daemon: client version 1.43 is too old. " +
			"Minimum supported API version is 1.44, please upgrade your client to a newer version (docker.go:1396:0s)",
		Fix: checks.Steps{checks.Say("Upgrade the runner to a release whose Docker client the daemon accepts (doctor run names it), " +
			"or remove a DOCKER_API_VERSION the runner's environment pins. Until the runner is upgraded, a Docker Engine 25 or " +
			"later takes a lower minimum from DOCKER_MIN_API_VERSION in dockerd's environment (a drop-in of docker.service), " +
			"within its own range.")},
		Verify: checks.Steps{checks.Sh("doctor run --only docker-api-version")},
		Patterns: []string{
			// moby api/server/middleware/version.go, v20.10.24 (and its successor in v29):
			// versionUnsupportedError.Error().
			"client version * is too old. Minimum supported API version is *",
			"client version * is too new. Maximum supported API version is *",
			// github.com/moby/moby/client v0.5.1, client.go (gitlab-runner v19.2.0 and later).
			"API version * is not supported by this client: the minimum supported API version is *",
		},
	},
	Requires:  []checks.Node{docker.DaemonFact, configfacts.RunnerEntryFact, hostfacts.VersionFact, hostfacts.EnvironFact},
	Executors: []string{checks.Docker},
	Network:   true,
	Run:       run,
}

// client is what the runner's Docker client speaks to this daemon.
type client struct {
	api    string // the version it sends
	pinned bool   // DOCKER_API_VERSION sets it; no negotiation
	lib    docker.ClientAPI
	// ev is how doctor knows: the release and its go.mod, or the variable.
	ev checks.Evidence
}

func run(p *checks.Pass) error {
	d, e := docker.DaemonFact.Get(p), configfacts.RunnerEntryFact.Get(p)
	if !d.Applies {
		return checks.Skip("%s does not use the Docker executor", e.Label())
	}
	if d.Probe == nil || d.Probe.Version == nil {
		return checks.Skip("the daemon did not answer GET /version (docker-socket says why)")
	}
	v := d.Probe.Version
	host := d.Addr.Host
	daemonEv := checks.Evidence{Source: "GET /version on " + host, Detail: fmt.Sprintf("%s: ApiVersion %s, MinAPIVersion %s", v, v.APIVersion, orNone(v.MinAPIVersion))}
	c, err := runnerClient(e, hostfacts.VersionFact.Get(p), hostfacts.EnvironFact.Get(p), v)
	if err != nil {
		return err
	}
	ev := []checks.Evidence{c.ev, daemonEv}
	if h := helperEvidence(e, hostfacts.VersionFact.Get(p)); h != nil {
		ev = append(ev, *h)
	}
	switch {
	case v.MinAPIVersion != "" && docker.APILess(c.api, v.MinAPIVersion):
		refused(p, d, e, c, ev, fmt.Sprintf("below the daemon's MinAPIVersion %s", v.MinAPIVersion), upgradeFix(c, v.MinAPIVersion))
	case c.pinned && v.APIVersion != "" && docker.APILess(v.APIVersion, c.api):
		refused(p, d, e, c, ev, fmt.Sprintf("above the daemon's ApiVersion %s", v.APIVersion),
			checks.Text(fmt.Sprintf("Remove DOCKER_API_VERSION from the runner's environment (%s), or set it to %s or below: the runner then "+
				"negotiates the version with the daemon.", c.ev.Source, v.APIVersion)))
	case !c.pinned && c.lib.MinAPI != "" && v.APIVersion != "" && docker.APILess(v.APIVersion, c.lib.MinAPI):
		// The client refuses the daemon: the words are the client's
		// (github.com/moby/moby/client, client.go), not the daemon's.
		p.Report(checks.Finding{
			Severity: checks.Error,
			Cause: fmt.Sprintf("%s's daemon at %s speaks API %s, older than the runner's Docker client (%s %s) accepts: every job fails "+
				"with \"API version %s is not supported by this client: the minimum supported API version is %s\".",
				e.Label(), host, v.APIVersion, c.lib.Module, c.lib.Version, v.APIVersion, c.lib.MinAPI),
			Evidence: ev,
			Fix:      checks.Text("Upgrade Docker Engine to 19.03 (API 1.40) or later."),
		})
	}
	return nil
}

// refused reports a client version the daemon refuses, in the daemon's own
// words: asked with that version, it answers what it answers the runner.
func refused(p *checks.Pass, d *docker.Daemon, e *configfacts.RunnerEntry, c client, ev []checks.Evidence, why string, fix checks.Steps) {
	a := docker.AskAs(p, d, e, c.api)
	host := d.Addr.Host
	switch {
	case a.Err == nil && a.Status == 200:
		// The daemon takes it after all (its range is not what /version
		// said): nothing fails.
		return
	case a.Err == nil && a.Message != "":
		ev = append(ev, checks.Evidence{Source: a.Request + " on " + host, Detail: fmt.Sprintf("%d %s", a.Status, a.Message)})
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s's Docker client speaks API %s, %s: the daemon refuses every request of it, so every job fails "+
				"with \"Error response from daemon: %s\".", e.Label(), c.api, why, a.Message),
			Evidence: ev,
			Fix:      fix,
		})
	default:
		detail := fmt.Sprintf("%d", a.Status)
		if a.Err != nil {
			detail = a.Err.Error()
		}
		ev = append(ev, checks.Evidence{Source: a.Request + " on " + host, Detail: detail})
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s's Docker client speaks API %s, %s: the daemon refuses it, and every job fails (doctor's request "+
				"as that client got no refusal to quote: %s).", e.Label(), c.api, why, detail),
			Evidence: ev,
			Fix:      fix,
		})
	}
}

// runnerClient is the version the runner's client sends this daemon: a
// DOCKER_API_VERSION of its environment as is (client.WithVersionFromEnv,
// or the runner's own os.Getenv up to v15.9: helpers/docker/
// official_docker_client.go), else its library's, lowered to an older
// daemon's by negotiation.
func runnerClient(e *configfacts.RunnerEntry, ver *hostfacts.Version, env *hostfacts.Environ, v *docker.Version) (client, error) {
	if env != nil && env.Err == nil {
		if pin, ok := env.Lookup("DOCKER_API_VERSION"); ok && strings.TrimSpace(pin) != "" {
			api := strings.TrimPrefix(strings.TrimSpace(pin), "v")
			return client{api: api, pinned: true,
				ev: checks.Evidence{Source: env.Where("DOCKER_API_VERSION"), Detail: "DOCKER_API_VERSION=" + strings.TrimSpace(pin) + ": the runner's client sends this version, without negotiating"}}, nil
		}
	}
	if ver.Err != nil || ver.Version.Version == "" {
		return client{}, fmt.Errorf("%s: the runner's version is unknown (%v), so the API version of its Docker client is", e.Label(), ver.Err)
	}
	lib, ok := docker.ClientAPIOf(ver.Version.Version)
	if !ok {
		return client{}, fmt.Errorf("%s: gitlab-runner %s is older than v15.0.0, the oldest whose Docker client doctor knows", e.Label(), ver.Version.Version)
	}
	c := client{api: lib.API, lib: lib}
	if v.APIVersion != "" && docker.APILess(v.APIVersion, c.api) {
		c.api = v.APIVersion // negotiated down to the daemon's
	}
	newer := ""
	if docker.APILess(docker.NewestClientRelease, strings.TrimPrefix(ver.Version.Version, "v")) {
		newer = fmt.Sprintf(" (as v%s's: doctor read go.mod up to that release)", docker.NewestClientRelease)
	}
	c.ev = checks.Evidence{Source: ver.Version.Source, Detail: fmt.Sprintf("gitlab-runner %s: its go.mod requires %s %s%s, which speaks API %s",
		ver.Version.Version, lib.Module, lib.Version, newer, lib.API)}
	return c, nil
}

// helperEvidence is the helper image's client, as evidence: its
// gitlab-runner-helper is built from the runner's module at the image's
// release, so it links the same client library (common imports
// helpers/docker for its Credentials type), but no job opens a daemon
// connection from the helper container; it is the runner's client that
// the daemon refuses.
func helperEvidence(e *configfacts.RunnerEntry, ver *hostfacts.Version) *checks.Evidence {
	image := ""
	if e.Runner.Docker != nil {
		image = strings.TrimSpace(e.Runner.Docker.HelperImage)
	}
	version := ""
	src := "helper_image not set: the runner's own version"
	if image != "" {
		hv, err := runnerversion.FromImage(image)
		if err != nil {
			return nil
		}
		version, src = hv.Version, "helper_image "+image
	} else if ver.Err == nil {
		version = ver.Version.Version
	}
	lib, ok := docker.ClientAPIOf(version)
	if !ok {
		return nil
	}
	source, _ := e.At("docker", "helper_image")
	return &checks.Evidence{Source: source, Detail: fmt.Sprintf("%s: gitlab-runner-helper %s, built with %s %s (API %s); the helper "+
		"container opens no connection to the daemon", src, version, lib.Module, lib.Version, lib.API)}
}

// upgradeFix names the first runner release whose client speaks min or
// later.
func upgradeFix(c client, min string) checks.Steps {
	if c.pinned {
		return checks.Text(fmt.Sprintf("Remove DOCKER_API_VERSION from the runner's environment (%s), or set it to %s or later: the runner then "+
			"negotiates the version with the daemon.", c.ev.Source, min))
	}
	for _, r := range docker.ClientAPIs() {
		if !docker.APILess(r.API, min) {
			return checks.Text(fmt.Sprintf("Upgrade the runner to gitlab-runner v%s or later (built with %s %s, API %s), and its helper image "+
				"with it. Until then, a Docker Engine 25 or later takes DOCKER_MIN_API_VERSION=%s in dockerd's environment (a drop-in "+
				"of docker.service, then systemctl restart docker), within its own range.", r.Since, r.Module, r.Version, r.API, c.api))
		}
	}
	return checks.Text("Upgrade the runner to its newest release.")
}

func orNone(s string) string {
	if s == "" {
		return "not given"
	}
	return s
}
