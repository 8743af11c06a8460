// Package fleetingconnector checks [runners.autoscaler.connector_config]
// against where the runner runs: the user and key it logs in to an
// instance with, the shell the instance executor runs the job in, and
// which of the instance's addresses it dials.
package fleetingconnector

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/source/sshkey"
)

var Check = &checks.Check{
	ID:       "fleeting-connector",
	Title:    "connector_config logs in to the instances from where the runner runs",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "The runner reads connector_config.key_path itself when it starts the autoscaler, as its own uid and " +
			"groups (a Secret mounted with fsGroup and defaultMode 0440 is readable through the group; 0400 owned by " +
			"root is not), and logs in to every instance as username with that key. On Debian and Ubuntu /bin/sh is " +
			"dash, and the job preparation script fails under it, so the instance executor needs shell = \"bash\". " +
			"use_external_addr = false dials the instance's internal address (a DVP VM's status.ipAddress), which only " +
			"a runner inside the cluster reaches; a runner outside it needs the external one.",
		Symptom: "Failed to process runner  builds=0 error=failed to update executor: initializing taskscaler: reading instance group connector key: open /ssh/id_ed25519: permission denied; " +
			"or ssh: handshake failed: ssh: unable to authenticate, attempted methods [none publickey], no supported methods remain; " +
			"or ERROR: Job failed: prepare environment: Process exited with status 2. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information",
		Fix: checks.Text("In [runners.autoscaler.connector_config] set username to the user cloud-init creates and key_path to the private key whose public half is in its ssh_authorized_keys, " +
			"readable by the runner (mount the Secret with defaultMode: 0440 under fsGroup); set shell = \"bash\" in [[runners]]; " +
			"use_external_addr = false inside the cluster, true outside it."),
		Verify: checks.Steps{checks.Sh("doctor run --only fleeting-connector")},
		Patterns: []string{
			// executors/internal/autoscaler/provider.go, v19.3.0.
			"initializing taskscaler: reading instance group connector key: *",
			// golang.org/x/crypto v0.54.0 (gitlab-runner v19.3.0's go.mod),
			// ssh/client.go "ssh: handshake failed: %w" around
			// ssh/client_auth.go's refusal.
			// common/build.go, v19.3.0: executePrepareScripts ("prepare environment: %w. Check …");
			// the status is x/crypto's ssh/session.go Waitmsg.String ("Process exited with status %v"),
			// which only an SSH-connected executor returns: without it the pattern would name this
			// check for every prepare failure of every executor (a namespace not found, a quota).
			// The URL is shells/index.html#shell-profile-loading up to v17.10.
			"prepare environment: Process exited with status *. Check https://docs.gitlab.com/runner/shells/",
			// docs/executors/instance.md, v16.11.0: "sh: 1: eval: Running on ip-x.x.x.x via
			// runner-host...n: not found": the preparation's eval under a shell that is not bash.
			"eval: Running on * via ",
		},
		Ambiguous: []checks.Ambiguous{
			// golang.org/x/crypto v0.54.0 (gitlab-runner v19.3.0's go.mod), ssh/client.go
			// "ssh: handshake failed: %w" around ssh/client_auth.go's refusal: the instance
			// executor's connector, or another executor's own SSH (the AWS Fargate custom
			// executor's, docs/configuration/runner_autoscale_aws_fargate, v17.11.0).
			{Pattern: "ssh: handshake failed: ssh: unable to authenticate, attempted methods *, no supported methods remain",
				Or:   []string{checks.NotACheck + "another executor's own SSH (a custom executor's driver)"},
				Tell: "the runner's executor: fleeting-connector checks an instance or docker-autoscaler runner's connector key and username"},
		},
	},
	Requires: []checks.Node{configfacts.RunnerEntryFact, hostfacts.RunAsFact, hostfacts.EnvironFact, kubefacts.FixScopeFact},
	// docker-autoscaler connects to its instances through the same provider
	// and connector_config (executors/docker/autoscaler/autoscaler.go,
	// v19.3.0); only the shell is the instance executor's alone, as the
	// Docker executor runs the script inside a container.
	Executors: []string{checks.Instance, checks.DockerAutoscaler},
	Run:       run,
}

// serviceAccountToken is where the kubelet mounts a pod's token
// (client-go rest.InClusterConfig reads it there).
const serviceAccountToken = "/var/run/secrets/kubernetes.io/serviceaccount/token"

func run(p *checks.Pass) error {
	r := configfacts.RunnerEntryFact.Get(p)
	a := r.Runner.Autoscaler
	if a == nil {
		return checks.Skip("no [runners.autoscaler] (fleeting-plugin reports it)")
	}
	cc := a.ConnectorConfig
	ra, e := hostfacts.RunAsFact.Get(p), hostfacts.EnvironFact.Get(p)
	var unknown []string

	if strings.TrimSpace(cc.Username) == "" {
		src, _ := r.At("autoscaler", "connector_config")
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: connector_config.username is not set: the runner logs in to every instance with an empty user name, "+
				"which no account on the VM has, so every job fails at `ssh: unable to authenticate`.", r.Label()),
			Evidence: []checks.Evidence{{Source: src, Detail: "username not set"}},
			Fix:      checks.Text("Set username in [runners.autoscaler.connector_config] to the user the VM's cloud-init creates (users: - name: … in the pool's userData)."),
		})
	}
	pod := podEvidence(p, e)
	if msg := checkKey(p, r, ra, cc.KeyPathname, cc.Password != "", cc.UseStaticCredentials, len(pod) > 0); msg != "" {
		unknown = append(unknown, msg)
	}
	if r.Executor == checks.Instance && cc.OS != "windows" {
		checkShell(p, r)
	}
	checkAddress(p, r, e, pod, cc.UseExternalAddr)
	if len(unknown) > 0 {
		return errors.New(strings.Join(unknown, "; "))
	}
	return nil
}

// checkKey judges key_path as the runner reads it: os.ReadFile, relative
// to its working directory, with its uid and groups. It returns why the
// judgement is unknown, or "".
func checkKey(p *checks.Pass, r *configfacts.RunnerEntry, ra *hostfacts.RunAs, keyPath string, password, static, inPod bool) string {
	src, line := r.At("autoscaler", "connector_config", "key_path")
	if keyPath == "" {
		if !password && static {
			src, _ := r.At("autoscaler", "connector_config")
			p.Report(checks.Finding{
				Cause: fmt.Sprintf("%s: use_static_credentials is set, but connector_config has neither key_path nor password: the runner has no credential to log in to an instance with.",
					r.Label()),
				Evidence: []checks.Evidence{{Source: src, Detail: "key_path and password not set; use_static_credentials = true"}},
				Fix:      checks.Text("Set key_path in [runners.autoscaler.connector_config] to the private key whose public half the VMs accept."),
			})
		}
		return ""
	}
	file := keyPath
	if !path.IsAbs(file) {
		file = path.Join(ra.Cwd, file)
	}
	ev := []checks.Evidence{{Source: src, Detail: strings.TrimSpace(line)}}
	st, err := p.Env.Stat(file)
	if err != nil {
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: connector_config.key_path %s cannot be read (%v): the runner fails to start the autoscaler, and every job fails with `reading instance group connector key`.",
				r.Label(), file, errText(err)),
			Evidence: append(ev, checks.Evidence{Source: file, Detail: errText(err)}),
			Fix:      checks.Text(fmt.Sprintf("Put the private key at %s (in a pod: mount the Secret that holds it there, with defaultMode: 0440 and the pod's fsGroup), or point key_path at where it is.", file)),
		})
		return ""
	}
	if !ra.UIDKnown {
		return fmt.Sprintf("cannot tell whether %s can read %s: %s", ra.Label(), file, ra.UIDProblem())
	}
	if blocked := hostfacts.Denied(p.Env, file, st, ra, hostfacts.Read); len(blocked) > 0 {
		for _, b := range blocked {
			ev = append(ev, b.Evidence())
		}
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: the runner's user (%s, groups %s) cannot read the connector key %s (blocked at %s): the runner fails to start the autoscaler with `reading instance group connector key: open %s: permission denied`, and no job gets an instance.",
				r.Label(), ra.Label(), groups(ra), file, hostfacts.BlockerPaths(blocked), file),
			Evidence: ev,
			Fix:      keyModeFix(kubefacts.FixScopeFact.Get(p), file, ra, blocked, inPod),
		})
		return ""
	}
	b, err := p.Env.ReadFileAs(file, hostio.KindPEM)
	if err != nil {
		return fmt.Sprintf("cannot read %s to tell what key it holds: %v", file, err)
	}
	k, err := sshkey.Parse(b)
	switch {
	case err != nil:
		p.Report(checks.Finding{
			Cause:    fmt.Sprintf("%s: connector_config.key_path %s holds no SSH private key (%v): the runner cannot log in to any instance.", r.Label(), file, err),
			Evidence: append(ev, checks.Evidence{Source: file, Detail: fmt.Sprintf("%d bytes, %v", len(b), err)}),
			Fix:      checks.Text("Point key_path at the private half of the key pair (the file ssh-keygen wrote without .pub)."),
		})
	case !k.Private:
		p.Report(checks.Finding{
			Cause:    fmt.Sprintf("%s: connector_config.key_path %s holds a public key (%s), not the private key: the runner cannot log in to any instance.", r.Label(), file, k),
			Evidence: append(ev, checks.Evidence{Source: file, Detail: k.String()}),
			Fix:      checks.Text("Point key_path at the private half of this key pair (the file ssh-keygen wrote without .pub)."),
		})
	case k.Encrypted:
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: the connector key %s is %s: connector_config has no passphrase setting (common/config.go ConnectorConfig), so the runner cannot use it.",
				r.Label(), file, k),
			Evidence: append(ev, checks.Evidence{Source: file, Detail: k.String()}),
			Fix:      passphraseFix(kubefacts.FixScopeFact.Get(p), file),
		})
	}
	return ""
}

// passphraseFix rewrites the key file without its passphrase: ssh-keygen
// -p writes the file it reads, as root, so the file must be the runner's
// own (kubefacts.FixScope).
func passphraseFix(scope *kubefacts.FixScope, file string) checks.Steps {
	say := "Remove the passphrase (or make a new key pair without one and put its public half in the VMs' ssh_authorized_keys)"
	file = path.Clean(file)
	if err := scope.Path(file); err != nil {
		return checks.Steps{checks.Say(say + "."), checks.Withheld(err)}
	}
	return checks.Steps{checks.Say(say + ":"), checks.Commands(fixcode.Command("ssh-keygen", "-p", "-N", "", "-f", file).Sudo())}
}

func keyModeFix(scope *kubefacts.FixScope, file string, ra *hostfacts.RunAs, blocked []hostfacts.Blocker, inPod bool) checks.Steps {
	if blocked[0].Path != file {
		var changes []kubefacts.Change
		for _, b := range blocked {
			changes = append(changes, kubefacts.Change{Path: b.Path, Mode: "o+x"})
		}
		return append(checks.Steps{checks.Say("Let the runner's user traverse the directories in the way, or move the key to a directory it can enter:")},
			kubefacts.ChangeSteps(scope, "", changes...)...)
	}
	if inPod {
		return checks.Text(fmt.Sprintf("Mount the key's Secret with defaultMode: 0440 and set the pod's securityContext.fsGroup: %d, so the file's group is one of the runner's and may read it.", ra.GID))
	}
	return kubefacts.ChangeSteps(scope, ra.Owner(), kubefacts.Change{Path: file, Mode: "0400", Chown: true})
}

func groups(ra *hostfacts.RunAs) string {
	gs := []string{fmt.Sprint(ra.GID)}
	for _, g := range ra.Groups {
		if g != ra.GID {
			gs = append(gs, fmt.Sprint(g))
		}
	}
	return strings.Join(gs, ",")
}

// checkShell: the instance executor's default shell is bash (its
// ExecutorOptions, executors/instance/instance.go, v19.3.0: Shell: "bash",
// DefaultShellName), so only a shell set to something else runs the job
// script elsewhere.
func checkShell(p *checks.Pass, r *configfacts.RunnerEntry) {
	shell := r.Runner.Shell
	if shell == "" || shell == "bash" {
		return
	}
	src, line := r.At("shell")
	f := checks.Finding{
		Evidence: []checks.Evidence{{Source: src, Detail: strings.TrimSpace(line)}},
		Fix:      checks.Text("Set shell = \"bash\" in this [[runners]] (or remove the key: the instance executor's default is bash), and keep bash in the VM image."),
	}
	if shell == "sh" {
		f.Cause = fmt.Sprintf("%s: shell = \"sh\": on Debian and Ubuntu /bin/sh is dash, and the job preparation script fails under it: every job ends with `prepare environment: … Check https://docs.gitlab.com/runner/shells/#shell-profile-loading`.", r.Label())
	} else {
		f.Severity = checks.Warning
		f.Cause = fmt.Sprintf("%s: shell = %q: the instance executor runs the job script with %s on the VM, whose image must carry it; the Deckhouse pool's image has bash and git.", r.Label(), shell, shell)
	}
	p.Report(f)
}

// checkAddress weighs use_external_addr against where the runner runs.
// Unset is false (executors/internal/autoscaler/acquisition.go, v19.3.0:
// useExternalAddr = ConnectorConfig.UseExternalAddr once [runners.autoscaler]
// exists). Inside a pod, the environment has KUBERNETES_SERVICE_HOST, or
// the kubelet mounted the service account's token.
func checkAddress(p *checks.Pass, r *configfacts.RunnerEntry, e *hostfacts.Environ, where []checks.Evidence, external bool) {
	inCluster := len(where) > 0
	if !inCluster && e.Err != nil {
		return // where the runner runs is unknown; nothing to weigh
	}
	src, line := r.At("autoscaler", "connector_config", "use_external_addr")
	cfg := checks.Evidence{Source: src, Detail: orText(strings.TrimSpace(line), "use_external_addr not set (false: the internal address)")}
	switch {
	case inCluster && external:
		p.Report(checks.Finding{
			Severity: checks.Warning,
			Cause:    fmt.Sprintf("%s: use_external_addr = true, but the runner runs inside the cluster: it dials each VM's external address, which a DVP VM may not have, instead of the internal one (status.ipAddress) it reaches directly.", r.Label()),
			Evidence: append([]checks.Evidence{cfg}, where...),
			Fix:      checks.Text("Set use_external_addr = false in [runners.autoscaler.connector_config]."),
		})
	case !inCluster && !external:
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: use_external_addr is false, but the runner runs outside the cluster (no KUBERNETES_SERVICE_HOST in %s, no token at %s): it dials each VM's internal address, the cluster's pod network, which this host does not reach; every job hangs at `Dialing instance` until it times out.",
				r.Label(), e.Source, serviceAccountToken),
			Evidence: []checks.Evidence{cfg, {Source: e.Source, Detail: "KUBERNETES_SERVICE_HOST not set"}},
			Fix:      checks.Text("Set use_external_addr = true in [runners.autoscaler.connector_config] (the VMs need an address this host reaches), or run the runner in the cluster as the Deployment of the Deckhouse guide."),
		})
	}
}

// podEvidence is what says the runner runs in a pod: KUBERNETES_SERVICE_HOST
// in its environment, or the kubelet's service-account token under the
// root; nil when neither is there.
func podEvidence(p *checks.Pass, e *hostfacts.Environ) []checks.Evidence {
	var where []checks.Evidence
	if e.Err == nil {
		if h, ok := e.Lookup("KUBERNETES_SERVICE_HOST"); ok && h != "" {
			where = append(where, checks.Evidence{Source: e.Where("KUBERNETES_SERVICE_HOST"), Detail: "KUBERNETES_SERVICE_HOST=" + h + ": the runner runs in a pod"})
		}
	}
	if st, err := p.Env.Stat(serviceAccountToken); err == nil && st.Mode().IsRegular() {
		where = append(where, checks.Evidence{Source: serviceAccountToken, Detail: fmt.Sprintf("a service-account token (%d bytes) is mounted", st.Size())})
	}
	return where
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func errText(err error) string {
	var fe *hostio.FileError
	if errors.As(err, &fe) {
		if errors.Is(fe.Err, fs.ErrNotExist) {
			return "no such file or directory"
		}
		return fe.Err.Error()
	}
	return err.Error()
}
