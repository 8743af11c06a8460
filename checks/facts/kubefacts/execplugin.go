package kubefacts

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
)

// What doctor keeps of a plugin's output: an ExecCredential is a few KiB
// (a token, or a certificate and its key); its stderr is for a human.
const (
	pluginStdoutLimit = 1 << 20
	pluginStderrLimit = 16 << 10
	// pluginStderrShown is how much of the redacted stderr a failure quotes.
	pluginStderrShown = 300
)

// execInfoEnv is the variable client-go hands a plugin its ExecCredential
// request in (plugin/pkg/client/auth/exec/exec.go, client-go v0.37.2).
const execInfoEnv = "KUBERNETES_EXEC_INFO"

// pluginCredential is what an exec plugin answered: a token, or a client
// certificate and key. It never leaves this package but in a rest.Config.
type pluginCredential struct {
	token     string
	cert, key []byte
}

// pluginCredentialFor decides whether cfg's exec credential plugin may run,
// and runs it: only with --exec-credential-plugins, only on a live host
// (--root /), as the runner's uid, under the API deadline, in a process
// group of its own that is killed when it is done. nil, nil when cfg has no
// plugin. The decision (never the credential) is what a bundle keeps, so
// doctor analyze answers as the live run did without running anything.
func pluginCredentialFor(p *checks.Pass, cfg *rest.Config) (*pluginCredential, error) {
	if cfg.ExecProvider == nil || cfg.AuthProvider != nil {
		return nil, nil // no plugin, or an auth-provider: refuseCodeFromInput says why
	}
	var cred *pluginCredential
	_, err := hostio.Probe(p.Env, "exec-credential-plugin", TargetKey(cfg), func() (string, error) {
		c, how, err := runPlugin(p, cfg.ExecProvider, cfg)
		cred = c
		return how, err
	})
	if err != nil {
		return nil, err
	}
	if cred == nil {
		// Replay: the live run ran it; the bundle answers the API.
		cred = &pluginCredential{}
	}
	return cred, nil
}

// runPlugin runs e as client-go's exec authenticator would (its env added
// to the runner's environment, KUBERNETES_EXEC_INFO, no stdin), and
// decodes its answer as client-go does. how describes what ran, for the
// bundle and -v.
func runPlugin(p *checks.Pass, e *clientcmdapi.ExecConfig, cfg *rest.Config) (cred *pluginCredential, how string, err error) {
	env := p.Env
	name := path.Base(e.Command)
	if !env.ExecCredentialPlugins {
		return nil, "", fmt.Errorf("the kubeconfig's user gets its credential from the exec plugin %q (%d arguments, apiVersion %s), which client-go would run; %w: "+
			"on the runner's host, --exec-credential-plugins runs it as the runner's user; or give doctor a kubeconfig with the credential itself (--kubeconfig), or run `kubectl auth whoami` as the runner's user",
			name, len(e.Args), e.APIVersion, ErrRunsCode)
	}
	if env.Root != "" && env.Root != "/" {
		return nil, "", fmt.Errorf("the kubeconfig's user gets its credential from the exec plugin %q, and --exec-credential-plugins runs one only on a live host: "+
			"under --root %s the kubeconfig is a copy from elsewhere, and its command is not this host's to run; %w", name, env.Root, ErrRunsCode)
	}
	if e.InteractiveMode == clientcmdapi.AlwaysExecInteractiveMode {
		return nil, "", fmt.Errorf("the exec plugin %q needs a terminal (interactiveMode: Always); doctor gives it no stdin, as the runner gives it none", name)
	}
	who, err := pluginUser(p)
	if err != nil {
		return nil, "", fmt.Errorf("the exec plugin %q is not run: %w", name, err)
	}
	vars := pluginEnviron(p, e, cfg)
	bin, err := lookPath(e.Command, vars)
	if err != nil {
		return nil, "", fmt.Errorf("the exec plugin %q: %w", name, err)
	}
	timeout := env.APITimeout()
	ctx, cancel := context.WithTimeout(p.Context, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, e.Args...)
	cmd.Env, cmd.Dir = vars, who.dir
	stdout, stderr := &capped{max: pluginStdoutLimit}, &capped{max: pluginStderrLimit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Its own group, so the deadline kills what it forked too; Pdeathsig, so
	// it does not outlive a doctor that is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: who.credential}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A child that keeps stdout open must not hold Wait past the deadline.
	cmd.WaitDelay = time.Second
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("the exec plugin %q does not start as %s: %v", name, who.label, err)
	}
	err = cmd.Wait()
	// Whatever the plugin left behind in its group goes too.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	how = fmt.Sprintf("ran %s as %s in %s", name, who.label, time.Since(t0).Round(time.Millisecond))
	// Its stderr is quoted (redacted) only when it failed: a plugin's
	// diagnostics may echo what it was given.
	env.Logf(2, "exec credential plugin: %s; %d bytes on stderr, not shown", how, stderr.n)
	switch {
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		return nil, how, fmt.Errorf("the exec plugin %q did not answer within %s; doctor killed its process group", name, timeout)
	case ctx.Err() != nil:
		return nil, how, fmt.Errorf("the exec plugin %q was stopped: %w", name, context.Cause(ctx))
	case err != nil:
		return nil, how, fmt.Errorf("the exec plugin %q failed as %s: %v; its stderr, redacted: %s", name, who.label, err, shownStderr(stderr))
	case stdout.over:
		return nil, how, fmt.Errorf("the exec plugin %q wrote more than %d KiB to stdout: not an ExecCredential", name, pluginStdoutLimit>>10)
	}
	cred, err = decodeExecCredential(stdout.b, e.APIVersion)
	if err != nil {
		return nil, how, fmt.Errorf("the exec plugin %q: %w", name, err)
	}
	return cred, how, nil
}

// pluginRunAs is the identity a plugin runs under.
type pluginRunAs struct {
	credential *syscall.Credential // nil: doctor's own
	label      string
	dir        string
}

// pluginUser is the runner's uid, gid and groups, which its own client-go
// would run the plugin as. With no runner on this host (doctor apart from
// it, --kubeconfig of the operator's) it is doctor's own user.
func pluginUser(p *checks.Pass) (*pluginRunAs, error) {
	ra := hostfacts.RunAsFact.Get(p)
	self := os.Geteuid()
	if ra.Process == nil && (ra.Unit == nil || !ra.Unit.Found()) {
		return &pluginRunAs{label: "doctor's own uid " + strconv.Itoa(self) + " (no runner on this host)", dir: "/"}, nil
	}
	if !ra.UIDKnown || ra.UID < 0 || ra.GID < 0 {
		return nil, fmt.Errorf("the uid of %s is unknown, and a plugin runs only as the runner's user", ra.Label())
	}
	who := &pluginRunAs{label: "uid " + strconv.Itoa(ra.UID), dir: ra.Cwd}
	if who.dir == "" {
		who.dir = "/"
	}
	if ra.UID == self && ra.GID == os.Getegid() {
		return who, nil
	}
	if self != 0 {
		return nil, fmt.Errorf("doctor runs as uid %d and may not run it as the runner's uid %d: run doctor as root (sudo doctor run --exec-credential-plugins)", self, ra.UID)
	}
	groups := make([]uint32, 0, len(ra.Groups))
	for _, g := range ra.Groups {
		if g >= 0 {
			groups = append(groups, uint32(g))
		}
	}
	who.credential = &syscall.Credential{Uid: uint32(ra.UID), Gid: uint32(ra.GID), Groups: groups}
	return who, nil
}

// pluginEnviron is the runner's environment (client-go passes its process's
// os.Environ()), then the kubeconfig's env entries, then the request in
// KUBERNETES_EXEC_INFO. With the runner's environment unknown, doctor's own.
func pluginEnviron(p *checks.Pass, e *clientcmdapi.ExecConfig, cfg *rest.Config) []string {
	var vars []string
	if re := hostfacts.EnvironFact.Get(p); re.Err == nil && len(re.Vars) > 0 {
		for k, v := range re.Vars {
			vars = append(vars, k+"="+v)
		}
		slices.Sort(vars)
	} else {
		vars = os.Environ()
	}
	for _, ev := range e.Env {
		vars = append(vars, ev.Name+"="+ev.Value)
	}
	info := map[string]any{"apiVersion": e.APIVersion, "kind": "ExecCredential", "spec": execSpec(e, cfg)}
	b, _ := json.Marshal(info)
	return append(vars, execInfoEnv+"="+string(b))
}

// execSpec is the ExecCredential's spec: never interactive, and the
// cluster when provideClusterInfo asks for it.
func execSpec(e *clientcmdapi.ExecConfig, cfg *rest.Config) map[string]any {
	spec := map[string]any{"interactive": false}
	if e.ProvideClusterInfo {
		spec["cluster"] = map[string]any{"server": cfg.Host, "tls-server-name": cfg.ServerName,
			"insecure-skip-tls-verify": cfg.Insecure, "certificate-authority-data": cfg.CAData}
	}
	return spec
}

// lookPath finds a bare command name in the PATH the plugin is given, as
// the runner's exec.Command would in its own environment.
func lookPath(command string, vars []string) (string, error) {
	if strings.Contains(command, "/") {
		return command, nil
	}
	var dirs string
	for _, kv := range vars {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			dirs = v
		}
	}
	for _, dir := range strings.Split(dirs, ":") {
		if dir == "" {
			continue
		}
		f := path.Join(dir, command)
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return f, nil
		}
	}
	return "", fmt.Errorf("%s is not in the runner's PATH (%s)", command, dirs)
}

// decodeExecCredential reads the answer as client-go does: the configured
// apiVersion, a status, a token or a certificate and key, both or neither.
func decodeExecCredential(b []byte, apiVersion string) (*pluginCredential, error) {
	var ec struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Status     *struct {
			Token                 string `json:"token"`
			ClientCertificateData string `json:"clientCertificateData"`
			ClientKeyData         string `json:"clientKeyData"`
		} `json:"status"`
	}
	if err := json.Unmarshal(b, &ec); err != nil {
		return nil, fmt.Errorf("its stdout (%d bytes) is not an ExecCredential: %s", len(b), redact.Text(err.Error()))
	}
	switch st := ec.Status; {
	case ec.Kind != "ExecCredential" || ec.APIVersion != apiVersion:
		return nil, fmt.Errorf("it answered %s %s, not ExecCredential of %s", ec.APIVersion, ec.Kind, apiVersion)
	case st == nil:
		return nil, errors.New("exec plugin didn't return a status field")
	case st.Token == "" && st.ClientCertificateData == "" && st.ClientKeyData == "":
		return nil, errors.New("exec plugin didn't return a token or cert/key pair")
	case (st.ClientCertificateData == "") != (st.ClientKeyData == ""):
		return nil, errors.New("exec plugin returned only certificate or key, not both")
	case st.ClientCertificateData != "":
		if _, err := tls.X509KeyPair([]byte(st.ClientCertificateData), []byte(st.ClientKeyData)); err != nil {
			return nil, errors.New("the certificate and key it returned do not make a pair")
		}
	}
	return &pluginCredential{token: ec.Status.Token, cert: []byte(ec.Status.ClientCertificateData), key: []byte(ec.Status.ClientKeyData)}, nil
}

// apply puts the credential where client-go takes it, in place of the
// plugin, which then never runs in-process.
func (c *pluginCredential) apply(cfg *rest.Config) {
	cfg.ExecProvider = nil
	if c.token != "" {
		cfg.BearerToken = c.token
	}
	if len(c.cert) > 0 {
		cfg.TLSClientConfig.CertData, cfg.TLSClientConfig.KeyData = c.cert, c.key
		cfg.TLSClientConfig.CertFile, cfg.TLSClientConfig.KeyFile = "", ""
	}
}

// shownStderr is the start of a plugin's stderr, redacted and cut: a
// plugin's diagnostics may echo what it was given.
func shownStderr(c *capped) string {
	if c.n == 0 {
		return "empty"
	}
	s := redact.Text(strings.TrimSpace(string(c.b)))
	if len(s) > pluginStderrShown {
		s = s[:pluginStderrShown] + "…"
	}
	return strconv.Quote(s)
}

// capped keeps the first max bytes written to it and counts the rest: a
// plugin that writes without end costs doctor nothing, and is not blocked.
type capped struct {
	b    []byte
	max  int
	n    int64
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	if room := c.max - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(room, len(p))]...)
	}
	if len(c.b) >= c.max && c.n > int64(c.max) {
		c.over = true
	}
	return len(p), nil
}
