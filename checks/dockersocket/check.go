// Package dockersocket checks that a Docker-executor runner reaches its
// daemon: the address it connects to ([runners.docker] host, DOCKER_HOST,
// or the default socket), that socket's file and permissions for the
// runner's uid and groups, the TLS settings of a tcp address, and, live,
// the daemon's /_ping and /version.
package dockersocket

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/docker"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// ID names the check.
const ID = "docker-socket"

var Check = &checks.Check{
	ID:       ID,
	Title:    "The runner reaches its Docker daemon",
	Severity: checks.Critical,
	Doc: checks.Doc{
		Cause: "The Docker executor connects to [runners.docker] host, else DOCKER_HOST of the runner's environment, " +
			"else unix:///var/run/docker.sock. Every job fails in preparation when that socket does not exist (no daemon, " +
			"or a runner container started without -v /var/run/docker.sock:/var/run/docker.sock), is not a socket (a " +
			"directory that docker run -v created because the host path did not exist yet), denies the runner's uid and " +
			"groups write access (a runner container without --group-add of the socket's group), or nothing answers on it. " +
			"For a tcp address the runner uses TLS only with tls_verify (from config.toml when host is set there, else " +
			"DOCKER_TLS_VERIFY and DOCKER_CERT_PATH of the environment, never a mix).",
		// common/build.go ("Job failed (system failure): "), executors/docker/docker.go
		// connectDocker ("getting docker info: %w", line 1396) and
		// helpers/docker/official_docker_client.go wrapError (" (docker.go:1396:0s)"),
		// all gitlab-runner v19.3.0; the words between them are the Docker client
		// library's (github.com/moby/moby/client v0.5.1, request.go), not the runner's.
		Symptom: "ERROR: Job failed (system failure): getting docker info: permission denied while trying to connect to the docker API at unix:///var/run/docker.sock (docker.go:1396:0s)",
		Fix: append(checks.Steps{checks.Say("Give the runner the socket. For a runner in a container:"), recreateSay, checks.Sh(recreateDefault)},
			checks.Say("For a runner on the host, add its user to the socket's group and restart it (a process gets its groups when it starts):"),
			checks.Sh(`export RUNNER_USER=gitlab-runner RUNNER_UNIT=gitlab-runner.service
sudo usermod -aG "$(stat -c %G /var/run/docker.sock)" "$RUNNER_USER"
sudo systemctl restart "$RUNNER_UNIT"`),
			checks.Say("Start the daemon when nothing answers:"),
			checks.Sh("sudo systemctl start docker")),
		Verify: checks.Target(checks.Sh(`doctor run --only docker-socket
sudo -u "$RUNNER_USER" docker -H unix:///var/run/docker.sock version`)),
		Patterns: []string{
			// Each behind what only the runner's own client prints (ambiguous.md §4): common/build.go's
			// "Preparation failed: %v" (v15.0.0 to v19.3.0), or helpers/docker's wrapError suffix
			// " (docker.go:NNN:0s)", " (executor_docker.go:NNN:0s)" before v13. The same words from the
			// docker CLI in a job (tcp://docker:2375, the dind service) or a docker+machine VM that went
			// away (" (manager.go:237:0s)") are not this host's daemon.
			// github.com/moby/moby/client v0.5.1, request.go (errors.Is(err, os.ErrPermission)),
			// as gitlab-runner v19.3.0 prints it.
			"Preparation failed: *permission denied while trying to connect to the docker API at ",
			// github.com/docker/docker client/request.go, v20.10.12 (runner v15.0 to v15.10): "Got
			// permission denied while trying to connect to the Docker daemon socket at %v"; v23.0.1
			// to v28.5.2 (runner v15.11 to v19.2): "permission denied while trying to connect to the
			// Docker daemon socket at %v".
			"Preparation failed: *permission denied while trying to connect to the Docker daemon socket at ",
			// github.com/moby/moby/client v0.5.1, request.go: errors.Is(err, os.ErrNotExist).
			"Preparation failed: *failed to connect to the docker API at *; check if the path is correct and if the daemon is running",
			// github.com/moby/moby/client v0.5.1, errors.go connectionFailed, and every docker client
			// since v20.10.12 (errors.go ErrorConnectionFailed): refused or timed out.
			"Preparation failed: *Cannot connect to the Docker daemon at *. Is the docker daemon running?",
			// request.go, a TLS alert from a daemon that wants a client certificate: v23.0.1 and later
			// "the server probably has client authentication (--tlsverify) enabled; check your TLS
			// client certification settings"; v20.10.12 "The server probably has client
			// authentication (--tlsverify) enabled. Please check your TLS client certification settings".
			"Preparation failed: *he server probably has client authentication (--tlsverify) enabled",
			// executors/docker/docker.go connectDocker, gitlab-runner v19.3.0.
			"getting docker info: *",
		},
		Signs: []checks.Sign{
			// helpers/docker's wrapError suffix " (docker.go:NNN:0s)" (" (executor_docker.go:NNN:0s)"
			// before v13) marks the runner's own client; on a socket or tcp:// 2375 it is this host's
			// daemon. On tcp:// 2376, Docker over TLS, it is as often a docker+machine or
			// docker-autoscaler instance that went away (docs/executors/docker_machine.md, v17.11.0:
			// "Cannot connect to the Docker daemon at tcp://10.200.142.223:2376. Is the docker daemon
			// running? (docker.go:650:120s)").
			{Core: "Cannot connect to the Docker daemon at *. Is the docker daemon running? (docker.go:", Endpoints: []string{checks.EndpointDocker}},
			{Core: "Cannot connect to the Docker daemon at *. Is the docker daemon running? (executor_docker.go:", Endpoints: []string{checks.EndpointDocker}},
			{Core: "Cannot connect to the Docker daemon at *. Is the docker daemon running? (", Endpoints: []string{checks.EndpointDockerTLS},
				Or:   []string{checks.NotACheck + "a docker+machine or docker-autoscaler instance that went away"},
				Tell: "the runner's executor: docker-socket dials the daemon a docker runner's host names; a docker+machine or autoscaler instance is gone with the job"},
		},
	},
	Requires:  []checks.Node{docker.DaemonFact, configfacts.RunnerEntryFact, hostfacts.RunAsFact, hostfacts.RunnerFact, kubefacts.FixScopeFact},
	Executors: []string{checks.Docker},
	Run:       run,
}

func run(p *checks.Pass) error {
	d, e, ra := docker.DaemonFact.Get(p), configfacts.RunnerEntryFact.Get(p), hostfacts.RunAsFact.Get(p)
	if !d.Applies {
		return checks.Skip("%s does not use the Docker executor", e.Label())
	}
	where := checks.Evidence{Source: d.Addr.Source, Detail: d.Addr.Detail}
	ev := []checks.Evidence{where}
	if d.EnvErr != nil {
		ev = append(ev, checks.Evidence{Source: "environment", Detail: "unknown (" + d.EnvErr.Error() + "): doctor assumed no DOCKER_HOST"})
	}
	if d.Addr.ParseErr != nil {
		p.Report(checks.Finding{
			Cause:    fmt.Sprintf("%s cannot connect to Docker: its daemon address %q does not parse (%v), so every job fails in preparation.", e.Label(), d.Addr.Host, d.Addr.ParseErr),
			Evidence: ev,
			Fix:      checks.Text("Set [runners.docker] host (or DOCKER_HOST) to unix:///path/to/docker.sock or tcp://host:port."),
		})
		return nil
	}
	tlsFindings(p, e, d, ev)
	var unknown error
	if d.Socket != nil {
		var done bool
		done, unknown = socketFindings(p, e, ra, d, ev)
		if done {
			return unknown
		}
	}
	probeFindings(p, e, d, ev)
	return unknown
}

// socketFindings judges the socket file; done means nothing further can be
// said (no socket to dial).
func socketFindings(p *checks.Pass, e *configfacts.RunnerEntry, ra *hostfacts.RunAs, d *docker.Daemon, ev []checks.Evidence) (done bool, unknown error) {
	s := d.Socket
	host := d.Addr.Host
	container := inContainer(p.Env, ra)
	scope := kubefacts.FixScopeFact.Get(p)
	switch {
	case s.Err != nil:
		missing := errors.Is(s.Err, syscall.ENOENT)
		cause := fmt.Sprintf("%s connects to %s, but %s cannot be read: %v.", e.Label(), host, s.Seen, hostio.FileCause(s.Err))
		if missing {
			// github.com/moby/moby/client v0.5.1, request.go: the words the job log carries.
			cause = fmt.Sprintf("%s connects to %s, but no socket is there: every job fails with \"failed to connect to the docker API at %s; "+
				"check if the path is correct and if the daemon is running\".", e.Label(), host, host)
		}
		p.Report(checks.Finding{
			Cause:    cause,
			Evidence: append(ev, checks.Evidence{Source: s.Seen, Detail: hostio.FileCause(s.Err).Error()}),
			Fix:      missingFix(scope, container, s.Path),
		})
		return true, nil
	case !s.IsSocket():
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s connects to %s, but %s is %s, not a socket: docker run -v creates a directory when the host "+
				"path does not exist yet (the daemon was not running when the runner's container started).", e.Label(), host, s.Path, kind(s)),
			Evidence: append(ev, checks.Evidence{Source: s.Seen, Detail: fmt.Sprintf("%s, mode %s", kind(s), s.Mode)}),
			Fix:      missingFix(scope, container, s.Path),
		})
		return true, nil
	}
	if !ra.UIDKnown {
		return false, fmt.Errorf("cannot tell whether %s may use %s: %s", ra.Label(), s.Path, ra.UIDProblem())
	}
	s.FindDenied(p.Env, ra)
	if len(s.Denied) == 0 {
		return false, nil
	}
	p.Report(checks.Finding{
		// github.com/moby/moby/client v0.5.1, request.go: the job log's words.
		Cause: fmt.Sprintf("%s (%s, groups %s) may not write to %s, so it cannot connect: every job fails with \"permission denied while "+
			"trying to connect to the docker API at %s\".", e.Label(), ra.Label(), groupList(ra), s.Path, host),
		Evidence: append(ev,
			checks.Evidence{Source: s.Seen, Detail: fmt.Sprintf("socket %s, owner %d, group %d", s.Mode.Perm(), s.Owner, s.Group)},
			checks.Evidence{Source: runnerSource(ra), Detail: fmt.Sprintf("uid %d, gid %d, supplementary groups %s; denied by %s", ra.UID, ra.GID, groupList(ra), strings.Join(s.Denied, ", "))}),
		Fix: permissionFix(p.Env, scope, ra, s, container),
	})
	return true, nil
}

// probeFindings judges the daemon's answer.
func probeFindings(p *checks.Pass, e *configfacts.RunnerEntry, d *docker.Daemon, ev []checks.Evidence) {
	pr := d.Probe
	if pr == nil {
		return
	}
	host := d.Addr.Host
	switch {
	case pr.Err != nil:
		p.Report(checks.Finding{
			Cause:    fmt.Sprintf("%s's Docker daemon at %s does not answer: %s.", e.Label(), host, probeError(host, pr, pr.Timeout.Round(time.Millisecond).String())),
			Evidence: append(ev, checks.Evidence{Source: pr.Request + " on " + host, Detail: pr.Err.Error()}),
			Fix: checks.Steps{checks.Say("Start the daemon and read why it stopped; for a tcp address, check that the daemon listens there:"),
				checks.Sh("sudo systemctl start docker\nsudo journalctl -u docker -n 50 --no-pager")},
		})
		return
	case pr.Status != 0:
		cause := fmt.Sprintf("%s's Docker daemon at %s answers %s with %d %q, so the runner's client fails.", e.Label(), host, pr.Request, pr.Status, pr.Body)
		fix := checks.Text("Point [runners.docker] host (or DOCKER_HOST) at the Docker Engine API.")
		if strings.Contains(pr.Body, "HTTP request to an HTTPS server") {
			cause = fmt.Sprintf("%s talks plain HTTP to %s, which speaks TLS (%q): the runner uses TLS only with tls_verify set.", e.Label(), host, pr.Body)
			fix = tlsFix(d)
		}
		p.Report(checks.Finding{Severity: checks.Error, Cause: cause, Evidence: append(ev, checks.Evidence{Source: pr.Request + " on " + host, Detail: fmt.Sprintf("%d %s", pr.Status, pr.Body)}), Fix: fix})
		return
	}
	v := pr.Version
	p.Observe(checks.Observation{Name: "docker_daemon_info", Value: 1, Labels: map[string]string{
		"host": host, "version": v.Version, "api_version": v.APIVersion, "os": v.Os, "arch": v.Arch}})
	// The daemon's API range against the runner's client is docker-api-version's.
}

// probeError says how the daemon failed, in the client library's words
// where the runner's job log carries them.
func probeError(host string, pr *docker.Probe, timeout string) string {
	err := pr.Err
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		// github.com/moby/moby/client v0.5.1, errors.go connectionFailed.
		return fmt.Sprintf("nothing listens on it (connection refused); every job fails with \"Cannot connect to the Docker daemon at %s. Is the docker daemon running?\"", host)
	case hostio.IsTimeout(err):
		return fmt.Sprintf("%s got no answer within %s; the runner's client gives up with \"Cannot connect to the Docker daemon at %s. Is the docker daemon running?\"", pr.Request, timeout, host)
	case strings.Contains(err.Error(), "bad certificate"), strings.Contains(err.Error(), "handshake failure"):
		// github.com/moby/moby/client v0.5.1, request.go.
		return "the TLS handshake fails: \"the server probably has client authentication (--tlsverify) enabled; check your TLS client certification settings\""
	case errors.Is(err, syscall.EACCES):
		return "doctor itself may not connect (permission denied)"
	}
	return err.Error()
}

func tlsFindings(p *checks.Pass, e *configfacts.RunnerEntry, d *docker.Daemon, ev []checks.Evidence) {
	a := d.Addr
	if len(a.Ignored) > 0 {
		var iev []checks.Evidence
		var keys []string
		for _, ig := range a.Ignored {
			keys = append(keys, ig.Key)
			iev = append(iev, checks.Evidence{Source: ig.Source, Detail: fmt.Sprintf("%s=%s: ignored, %s", ig.Key, ig.Value, ig.Why)})
		}
		p.Report(checks.Finding{
			Severity: checks.Warning,
			Cause:    fmt.Sprintf("%s sets %s, which the runner ignores: it takes the daemon address and its TLS settings from config.toml or from the environment, never a mix.", e.Label(), strings.Join(keys, " and ")),
			Evidence: append(append([]checks.Evidence{}, ev...), iev...),
			Fix:      tlsFix(d),
		})
	}
	if a.Scheme == "unix" {
		return
	}
	switch {
	case a.BadTLSVerify != "":
		p.Report(checks.Finding{
			Severity: checks.Error,
			Cause: fmt.Sprintf("%s has DOCKER_TLS_VERIFY=%s, which the runner's strconv.ParseBool reads as false: it talks plain HTTP to %s, "+
				"where the docker CLI (any non-empty value) would use TLS.", e.Label(), a.BadTLSVerify, a.Host),
			Evidence: append(ev, checks.Evidence{Source: "DOCKER_TLS_VERIFY", Detail: a.BadTLSVerify}),
			Fix:      checks.Text("Set DOCKER_TLS_VERIFY=1 in the runner's environment."),
		})
	case !a.TLSVerify && a.CertPath != "":
		p.Report(checks.Finding{
			Severity: checks.Warning,
			Cause: fmt.Sprintf("%s names certificates in %s but not tls_verify, so the runner ignores them and talks plain HTTP to %s "+
				"(helpers/docker/options.go applies TLS only with TLSVerify).", e.Label(), a.CertPath, a.Host),
			Evidence: ev,
			Fix:      tlsFix(d),
		})
	case a.TLSVerify && a.CertPath == "":
		p.Report(checks.Finding{
			Severity: checks.Warning,
			Cause: fmt.Sprintf("%s verifies TLS to %s with no certificate directory: it trusts the system CAs only and presents no client "+
				"certificate (the runner, unlike the docker CLI, does not fall back to ~/.docker), which a daemon run with --tlsverify refuses.", e.Label(), a.Host),
			Evidence: ev,
			Fix:      tlsFix(d),
		})
	}
	if d.TLSErr != nil {
		// helpers/docker/official_docker_client.go (logrus "Error configuring Docker client
		// transport:") and executors/docker/docker.go ("creating docker connection: %w",
		// "creating docker client: %w"), gitlab-runner v19.3.0; v15.0 to v18.0 print the error
		// after "Preparation failed: " alone.
		p.Report(checks.Finding{
			Severity: checks.Critical,
			Cause: fmt.Sprintf("%s cannot build its Docker client for %s, so every job fails with \"Preparation failed: creating docker connection: "+
				"creating docker client: %s\", and the runner logs \"Error configuring Docker client transport\".", e.Label(), a.Host, d.TLSErr),
			Evidence: append(ev, checks.Evidence{Source: d.TLSErr.File, Detail: hostio.FileCause(d.TLSErr.Err).Error()}),
			Fix: checks.Text(fmt.Sprintf("Put ca.pem, cert.pem and key.pem (the daemon's CA and a client certificate it trusts, with its key) into %s, "+
				"readable by the runner's user (owned by it, or mode 0640 with its group), then restart the runner.", path.Dir(d.TLSErr.File))),
		})
	}
}

// tlsFix says where the runner's TLS settings go, by where its host is.
// The host is a value of config.toml or the environment: the TOML encoder
// writes it as a string, whatever it holds.
func tlsFix(d *docker.Daemon) checks.Steps {
	lines := checks.Document(fixcode.TOML(fixcode.TOMLTable("runners.docker",
		fixcode.KV{Key: "host", Value: d.Addr.Host},
		fixcode.KV{Key: "tls_verify", Value: true},
		fixcode.KV{Key: "tls_cert_path", Value: "/etc/gitlab-runner/docker-certs"})))
	if d.Addr.FromEnv {
		return checks.Steps{
			checks.Say("Set the three together: DOCKER_HOST, DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH (the directory with ca.pem, cert.pem and key.pem; here /etc/gitlab-runner/docker-certs) in the runner's environment, or all three in [runners.docker] of its [[runners]] entry:"),
			lines,
		}
	}
	return checks.Steps{
		checks.Say("Set them together in [runners.docker] of the runner's [[runners]] entry, tls_cert_path being the directory with ca.pem, cert.pem and key.pem (here /etc/gitlab-runner/docker-certs):"),
		lines,
	}
}

// recreateDefault is recreateContainer's commands for the default socket,
// as the Deckhouse document writes them: constant text.
const recreateDefault = `RUNNER_CONTAINER=code-runner
RUNNER_IMAGE=registry.deckhouse.ru/deckhouse/ee/packages/code/images/runner:v19.3.0
docker rm -f "$RUNNER_CONTAINER"
docker run -d --name "$RUNNER_CONTAINER" --restart always \
  --group-add "$(stat -c %g /var/run/docker.sock)" \
  -v code-runner-config:/etc/gitlab-runner \
  -v /var/run/docker.sock:/var/run/docker.sock \
  "$RUNNER_IMAGE"`

var recreateSay = checks.Say("Recreate the runner's container with the socket and its group (RUNNER_CONTAINER and RUNNER_IMAGE: its name and image; the config volume as it was):")

// recreateContainer is the Deckhouse document's docker run of the runner's
// container, with the socket and its group (deckhouse-code-runners, "Start
// the runner"). The container's name and image are the operator's. For
// the default socket the commands are doctor's constant text
// (recreateDefault, the catalog's too); for any other the socket's path is
// one word wherever it goes, one command a line. docker run -v splits its
// value at ':' (host path, container path, options) and reads a source
// that is not absolute as a volume's name (docker/cli, opts/volume.go and
// the daemon's volume/mounts/linux_parser.go), so such a path gets no
// command.
func recreateContainer(sock string) checks.Steps {
	say := recreateSay
	if sock == defaultSocket {
		return checks.Steps{say, checks.Sh(recreateDefault)}
	}
	if strings.Contains(sock, ":") || !path.IsAbs(sock) {
		return checks.Steps{say, checks.Withheld(errors.New("the socket's path is not an absolute path without ':', which is all docker run -v takes as a host path"))}
	}
	run := fixcode.Command("docker", "run", "-d", "--name").Words(fixcode.Var("RUNNER_CONTAINER")).Arg("--restart", "always").
		Words(fixcode.Data("--group-add"), fixcode.Output(fixcode.Command("stat", "-c", "%g", sock))).
		Arg("-v", "code-runner-config:/etc/gitlab-runner", "-v", sock+":"+sock).
		Words(fixcode.Var("RUNNER_IMAGE"))
	return checks.Steps{say, checks.Script(fixcode.Lines(
		fixcode.Set("RUNNER_CONTAINER", fixcode.Data("code-runner")),
		fixcode.Set("RUNNER_IMAGE", fixcode.Data("registry.deckhouse.ru/deckhouse/ee/packages/code/images/runner:v19.3.0")),
		fixcode.Run(fixcode.Command("docker", "rm", "-f").Words(fixcode.Var("RUNNER_CONTAINER"))),
		fixcode.Run(run)))}
}

// defaultSocket is the Docker client's default address's path
// (github.com/moby/moby/client v0.5.1, client_unix.go: DefaultDockerHost
// "unix:///var/run/docker.sock"), the one the Deckhouse document mounts.
const defaultSocket = "/var/run/docker.sock"

// missingFix starts the daemon and, for a runner in a container, removes
// the directory docker run -v left where the socket goes, then recreates
// the container. The socket's directory is the system's (/var/run), not
// the runner's, so FixScope refuses an rmdir there: at the default path
// the rmdir is doctor's own constant (rmdir removes only an empty
// directory, never a socket or a file), anywhere else FixScope decides,
// and a path it refuses gets a sentence.
func missingFix(scope *kubefacts.FixScope, container bool, sock string) checks.Steps {
	if !container {
		return checks.Steps{checks.Say("Start the Docker daemon, or point [runners.docker] host at the socket it listens on:"), checks.Sh("sudo systemctl start docker")}
	}
	say := checks.Say("Start the Docker daemon on the host, and remove the directory that the container's start left at " + sock + " in its place:")
	var steps checks.Steps
	switch err := scope.Path(sock); {
	case sock == defaultSocket:
		steps = checks.Steps{say, checks.Sh("sudo systemctl start docker\nsudo rmdir /var/run/docker.sock")}
	case err == nil:
		steps = checks.Steps{say, checks.Commands(fixcode.Command("systemctl", "start", "docker").Sudo(), fixcode.Command("rmdir", sock).Sudo())}
	default:
		steps = checks.Steps{say, checks.Sh("sudo systemctl start docker"), checks.Withheld(err),
			checks.Say("Remove the directory by hand (rmdir, which removes only an empty one) once you have checked that " + sock + " is the daemon's socket path.")}
	}
	return append(steps, recreateContainer(sock)...)
}

// permissionFix is built from the socket's group and the runner's identity:
// --group-add for a container (the Deckhouse document's docker run), the
// group for a host runner. usermod acts for the runner's user, so only for
// a runner FixScope vouches for; the unit restarted is the runner's, when
// systemd could have it (fixcode.UnitName).
func permissionFix(env *hostio.Env, scope *kubefacts.FixScope, ra *hostfacts.RunAs, s *docker.Socket, container bool) checks.Steps {
	if len(s.Denied) > 0 && strings.HasPrefix(s.Denied[0], "directory ") {
		return checks.Text("Let the runner's user search " + strings.Join(s.Denied, ", ") + " (mode o+x, or a group it is in).")
	}
	if container {
		return recreateContainer(s.Path)
	}
	group := groupName(env, s.Group)
	user := ra.User
	if user == "" {
		user = strconv.Itoa(ra.UID)
	}
	unit := hostfacts.DefaultUnit
	if ra.Unit != nil && ra.Unit.Name != "" {
		unit = ra.Unit.Name
	}
	return addToGroup(scope, group, user, unit)
}

// addToGroup adds user to group and restarts unit, as root: usermod acts
// for the runner's user, so only for a runner FixScope vouches for; the
// names are words of the commands, the unit's checked as systemd would.
func addToGroup(scope *kubefacts.FixScope, group, user, unit string) checks.Steps {
	say := checks.Say("Add the runner's user to the socket's group and restart it (a process gets its groups when it starts):")
	if err := scope.ActsFor(); err != nil {
		return checks.Steps{say, checks.Withheld(err)}
	}
	for _, n := range []struct{ kind, name string }{{"group", group}, {"user", user}} {
		// usermod (shadow-utils) reads a word that starts with '-' as an
		// option, and a name of neither kind can start with one
		// (useradd/groupadd refuse it: is_valid_name, lib/chkname.c).
		if n.name == "" || strings.HasPrefix(n.name, "-") {
			return checks.Steps{say, checks.Withheld(fmt.Errorf("the %s name is empty or starts with '-', which usermod would read as an option", n.kind))}
		}
	}
	cmds := []fixcode.Cmd{fixcode.Command("usermod", "-aG", group, user).Sudo()}
	unitErr := fixcode.UnitName(unit)
	if unitErr == nil {
		cmds = append(cmds, fixcode.Command("systemctl", "restart", unit).Sudo())
	}
	steps := checks.Steps{say, checks.Commands(cmds...)}
	if unitErr != nil {
		steps = append(steps, checks.Withheld(unitErr))
	}
	return steps
}

// inContainer reports whether the runner process runs in a container, by
// its cgroup: Docker, containerd, Podman and Kubernetes name theirs.
func inContainer(env *hostio.Env, ra *hostfacts.RunAs) bool {
	if ra.Process == nil {
		return false
	}
	b, err := env.ReadProc("/proc/" + strconv.Itoa(ra.Process.PID) + "/cgroup")
	if err != nil {
		return false
	}
	s := string(b)
	for _, k := range []string{"docker", "containerd", "kubepods", "libpod"} {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

func groupName(env *hostio.Env, gid int) string {
	b, err := env.ReadFile("/etc/group")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Split(line, ":")
			if len(f) >= 3 && f[2] == strconv.Itoa(gid) && f[0] != "" {
				return f[0]
			}
		}
	}
	return strconv.Itoa(gid)
}

func groupList(ra *hostfacts.RunAs) string {
	if len(ra.Groups) == 0 {
		return "none"
	}
	s := make([]string, len(ra.Groups))
	for i, g := range ra.Groups {
		s[i] = strconv.Itoa(g)
	}
	return strings.Join(s, " ")
}

func runnerSource(ra *hostfacts.RunAs) string {
	if ra.Process != nil {
		return "/proc/" + strconv.Itoa(ra.Process.PID) + "/status"
	}
	if ra.Unit != nil && ra.Unit.Unit != nil {
		return ra.Unit.Unit.Path
	}
	return "the runner"
}

func kind(s *docker.Socket) string {
	if s.Mode.IsDir() {
		return "a directory"
	}
	if s.Mode.IsRegular() {
		return "a regular file"
	}
	return hostio.FileType(s.Mode)
}
