package deploy

import (
	"bufio"
	"bytes"
	"github.com/socialwebcomputer/doctor/testkit/tools"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/cmd/doctor/app/metrics"
)

const (
	serviceFile = "systemd/doctor-health.service"
	timerFile   = "systemd/doctor-health.timer"
	manifest    = "kubernetes/doctor.yaml"
	clusterRead = "kubernetes/doctor-cluster-read.yaml"
	rulesFile   = "prometheus-rules.yaml"
	rulesTests  = "prometheus-rules.test.yaml"

	wantExecStart = "/usr/local/bin/doctor run --textfile /var/lib/node_exporter/textfile_collector/doctor.prom --state /var/lib/doctor/state.json --cache-dir /var/cache/doctor -o json"
)

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// unit is a unit file's settings: section -> key -> values in order.
type unit map[string]map[string][]string

func parseUnit(t *testing.T, text string) unit {
	t.Helper()
	u := unit{}
	sec := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";"):
		case strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]"):
			sec = l[1 : len(l)-1]
			u[sec] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(l, "=")
			if !ok || sec == "" || strings.HasSuffix(l, "\\") {
				t.Fatalf("line %d: %q is not a KEY=VALUE line of a section", n, l)
			}
			u[sec][k] = append(u[sec][k], v)
		}
	}
	return u
}

func (u unit) get(t *testing.T, sec, key string) string {
	t.Helper()
	vs := u[sec][key]
	if len(vs) != 1 {
		t.Errorf("[%s] %s is set %d times, want once", sec, key, len(vs))
		return ""
	}
	return vs[0]
}

// TestServiceUnit pins what the health cron promises: the command, the
// exit codes that count as success, and the read-only sandbox with exactly
// the directories doctor writes.
func TestServiceUnit(t *testing.T) {
	u := parseUnit(t, read(t, serviceFile))
	want := map[string]string{
		"Type": "oneshot", "ExecStart": wantExecStart, "SuccessExitStatus": "1 2", "User": "root",
		"ProtectSystem": "strict", "NoNewPrivileges": "yes", "PrivateTmp": "yes", "ProtectHome": "read-only",
		"StateDirectory": "doctor", "CacheDirectory": "doctor",
	}
	for k, v := range want {
		if got := u.get(t, "Service", k); got != v {
			t.Errorf("[Service] %s=%q, want %q", k, got, v)
		}
	}
	// Every file the command writes is in a ReadWritePaths directory.
	rw := strings.Fields(u.get(t, "Service", "ReadWritePaths"))
	args := strings.Fields(wantExecStart)
	for _, flag := range []string{"--textfile", "--state", "--cache-dir"} {
		i := slices.Index(args, flag)
		dir := filepath.Dir(args[i+1])
		if flag == "--cache-dir" {
			dir = args[i+1] // the directory itself
		}
		if !slices.Contains(rw, dir) && !slices.Contains(rw, "-"+dir) {
			t.Errorf("%s %s: its directory %s is not in ReadWritePaths %v", flag, args[i+1], dir, rw)
		}
	}
	// doctor must still see other users' processes and read them.
	if v := u["Service"]["ProtectProc"]; len(v) > 0 && v[0] != "default" {
		t.Errorf("ProtectProc=%s hides the runner's process from doctor", v[0])
	}
	caps := strings.Fields(u.get(t, "Service", "CapabilityBoundingSet"))
	for _, c := range []string{"CAP_SYS_PTRACE", "CAP_DAC_READ_SEARCH"} {
		if !slices.Contains(caps, c) {
			t.Errorf("CapabilityBoundingSet lacks %s: root could not read the runner's /proc/<pid>/environ", c)
		}
	}
}

func TestTimerUnit(t *testing.T) {
	u := parseUnit(t, read(t, timerFile))
	for k, v := range map[string]string{"OnCalendar": "*:0/5", "Persistent": "true", "Unit": "doctor-health.service"} {
		if got := u.get(t, "Timer", k); got != v {
			t.Errorf("[Timer] %s=%q, want %q", k, got, v)
		}
	}
	d, err := time.ParseDuration(u.get(t, "Timer", "RandomizedDelaySec") + "s")
	if err != nil || d <= 0 || d >= 5*time.Minute {
		t.Errorf("RandomizedDelaySec=%v (%v): want a delay shorter than the 5-minute period", d, err)
	}
	if got := u.get(t, "Install", "WantedBy"); got != "timers.target" {
		t.Errorf("WantedBy=%s", got)
	}
}

// systemdRoot lays out a file system root for systemd-analyze --root: the
// host's unit directory (for sysinit.target, timers.target and the rest),
// the two units in /etc/systemd/system, and an executable at ExecStart's
// path, which verify requires. service and timer replace the files' text
// when not "".
func systemdRoot(t *testing.T, service, timer string) string {
	t.Helper()
	root := t.TempDir()
	hostUnits := "/usr/lib/systemd/system"
	if _, err := os.Stat(hostUnits); err != nil {
		t.Fatalf("systemd-analyze is installed but %s is not: %v", hostUnits, err)
	}
	if err := os.MkdirAll(filepath.Join(root, "usr/lib/systemd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", hostUnits, filepath.Join(root, "usr/lib/systemd")+"/").CombinedOutput(); err != nil {
		t.Fatalf("copying %s: %v\n%s", hostUnits, err, out)
	}
	etc := filepath.Join(root, "etc/systemd/system")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	if service == "" {
		service = read(t, serviceFile)
	}
	if timer == "" {
		timer = read(t, timerFile)
	}
	for name, text := range map[string]string{"doctor-health.service": service, "doctor-health.timer": timer} {
		if err := os.WriteFile(filepath.Join(etc, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(root, "usr/local/bin/doctor")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// verify runs systemd-analyze verify on the two units under root: its
// combined output and exit error. verify prints a bad setting ("Failed to
// parse", "Unknown key") and exits 0 all the same, so any output is a
// failure.
func verify(t *testing.T, root string) (string, error) {
	t.Helper()
	cmd := exec.Command("systemd-analyze", "verify", "--root="+root, "--man=no", "--generators=no",
		"/etc/systemd/system/doctor-health.service", "/etc/systemd/system/doctor-health.timer")
	cmd.Env = append(os.Environ(), "SYSTEMD_LOG_COLOR=0", "SYSTEMD_PAGER=")
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func needSystemdAnalyze(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		missing(t, "systemd-analyze is not installed here, so the unit files are not verified (install systemd to verify them)")
	}
}

func TestSystemdAnalyzeVerify(t *testing.T) {
	needSystemdAnalyze(t)
	out, err := verify(t, systemdRoot(t, "", ""))
	if err != nil || out != "" {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}

	// The negative controls: each broken copy must be reported, so this
	// test can fail.
	svc, tmr := read(t, serviceFile), read(t, timerFile)
	for _, c := range []struct{ name, service, timer, says string }{
		{"a misspelt service type", strings.Replace(svc, "Type=oneshot", "Type=oneshoot", 1), "", "oneshoot"},
		{"an unknown key", strings.Replace(svc, "NoNewPrivileges=yes", "NoNewPrivilege=yes", 1), "", "Unknown key"},
		{"an exit status that is not one", strings.Replace(svc, "SuccessExitStatus=1 2", "SuccessExitStatus=1 two", 1), "", "two"},
		{"a missing binary", strings.Replace(svc, "ExecStart=/usr/local/bin/doctor ", "ExecStart=/usr/local/bin/doctorx ", 1), "", "doctorx"},
		{"a bad calendar", "", strings.Replace(tmr, "OnCalendar=*:0/5", "OnCalendar=every five minutes", 1), "calendar"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.service == svc || c.timer == tmr {
				t.Fatal("the mutation changed nothing: the unit file no longer has the line it breaks")
			}
			out, err := verify(t, systemdRoot(t, c.service, c.timer))
			if out == "" && err == nil {
				t.Fatalf("systemd-analyze verify accepted a unit with %s", c.name)
			}
			if !strings.Contains(out, c.says) {
				t.Errorf("the report does not mention %q:\n%s", c.says, out)
			}
		})
	}
}

// TestSystemdAnalyzeSecurity keeps the sandbox from eroding: the exposure
// score systemd-analyze security gives the service (0 best, 10 worst).
func TestSystemdAnalyzeSecurity(t *testing.T) {
	needSystemdAnalyze(t)
	root := systemdRoot(t, "", "")
	cmd := exec.Command("systemd-analyze", "security", "--offline=true", "--root="+root, "--no-pager", "doctor-health.service")
	cmd.Env = append(os.Environ(), "SYSTEMD_LOG_COLOR=0", "SYSTEMD_COLORS=0")
	out, _ := cmd.CombinedOutput() // it exits non-zero above its --threshold
	m := regexp.MustCompile(`Overall exposure level for doctor-health\.service: ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no exposure level in:\n%s", out)
	}
	score, _ := strconv.ParseFloat(string(m[1]), 64)
	t.Logf("exposure %.1f", score)
	if score > 3.5 {
		t.Errorf("exposure %.1f, more than 3.5: the sandbox lost a setting\n%s", score, out)
	}
}

// TestTimerCalendar: the timer's calendar fires every 5 minutes.
func TestTimerCalendar(t *testing.T) {
	needSystemdAnalyze(t)
	out, err := exec.Command("systemd-analyze", "calendar", "--iterations=4", "*:0/5").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var at []time.Time
	for _, m := range regexp.MustCompile(`(?m)(?:Next elapse|Iter\. #\d+): \w+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)`).FindAllSubmatch(out, -1) {
		ts, err := time.Parse("2006-01-02 15:04:05", string(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		at = append(at, ts)
	}
	if len(at) != 4 {
		t.Fatalf("want 4 elapses in:\n%s", out)
	}
	for i := 1; i < len(at); i++ {
		if d := at[i].Sub(at[i-1]); d != 5*time.Minute {
			t.Errorf("elapse %d is %v after the one before, want 5m", i, d)
		}
	}
}

// objects decodes a multi-document manifest strictly (an unknown or
// misspelt field is an error) into typed objects.
func objects(t *testing.T, name string) []runtime.Object {
	t.Helper()
	codecs := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict)
	dec := codecs.UniversalDeserializer()
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(read(t, name))))
	var out []runtime.Object
	for {
		doc, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, doc)
		}
		out = append(out, obj)
	}
	return out
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, l := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.Bytes()
}

var readVerbs = []string{"get", "list", "watch"}

func checkReadOnly(t *testing.T, what string, rules []rbacv1.PolicyRule) {
	t.Helper()
	for _, r := range rules {
		for _, v := range r.Verbs {
			if !slices.Contains(readVerbs, v) {
				t.Errorf("%s grants %q on %v: not read-only", what, v, r.Resources)
			}
		}
		for _, res := range r.Resources {
			if res == "*" || strings.HasPrefix(res, "secrets") || strings.Contains(res, "/") {
				t.Errorf("%s grants %v on %q: no secrets, no subresources, no wildcard", what, r.Verbs, res)
			}
		}
		if slices.Contains(r.APIGroups, "*") {
			t.Errorf("%s grants every API group", what)
		}
	}
}

// TestManifests checks what the API server's validation does not: the
// promises of the files (read-only, no secrets, the CronJob's schedule and
// security context, a kubeconfig that loads) and that the CronJob's --skip
// names real checks.
func TestManifests(t *testing.T) {
	var (
		sa      *corev1.ServiceAccount
		role    *rbacv1.Role
		binding *rbacv1.RoleBinding
		cm      *corev1.ConfigMap
		cj      *batchv1.CronJob
	)
	for _, o := range objects(t, manifest) {
		switch o := o.(type) {
		case *corev1.ServiceAccount:
			sa = o
		case *rbacv1.Role:
			role = o
		case *rbacv1.RoleBinding:
			binding = o
		case *corev1.ConfigMap:
			cm = o
		case *batchv1.CronJob:
			cj = o
		default:
			t.Errorf("%s: unexpected %T", manifest, o)
		}
	}
	if sa == nil || role == nil || binding == nil || cm == nil || cj == nil {
		t.Fatalf("%s lacks an object: sa %v role %v binding %v configmap %v cronjob %v", manifest, sa != nil, role != nil, binding != nil, cm != nil, cj != nil)
	}
	const ns = "code-runner"
	for _, m := range []string{sa.Namespace, role.Namespace, binding.Namespace, cm.Namespace, cj.Namespace} {
		if m != ns {
			t.Errorf("an object is in namespace %q, want %q (the Deckhouse guide's)", m, ns)
		}
	}
	checkReadOnly(t, "Role "+role.Name, role.Rules)
	for _, r := range role.Rules {
		if slices.Contains(r.Resources, "namespaces") && !slices.Equal(r.ResourceNames, []string{ns}) {
			t.Errorf("the Role's namespaces rule is not limited to %s: %v", ns, r.ResourceNames)
		}
	}
	if binding.RoleRef.Kind != "Role" || binding.RoleRef.Name != role.Name ||
		len(binding.Subjects) != 1 || binding.Subjects[0].Kind != "ServiceAccount" || binding.Subjects[0].Name != sa.Name || binding.Subjects[0].Namespace != ns {
		t.Errorf("the RoleBinding does not bind the Role to the ServiceAccount: %+v %+v", binding.RoleRef, binding.Subjects)
	}

	if cj.Spec.Schedule != "*/10 * * * *" {
		t.Errorf("schedule %q, want every 10 minutes", cj.Spec.Schedule)
	}
	if cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("concurrencyPolicy %q, want Forbid", cj.Spec.ConcurrencyPolicy)
	}
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	if pod.ServiceAccountName != sa.Name {
		t.Errorf("the CronJob runs as %q, want %q", pod.ServiceAccountName, sa.Name)
	}
	if psc := pod.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Errorf("the pod is not runAsNonRoot with a non-zero uid: %+v", psc)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Image != "registry.example.invalid/doctor:<version>" {
		t.Errorf("image %q, want the placeholder", c.Image)
	}
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("the container's securityContext is not read-only, unprivileged, without capabilities: %+v", sc)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := c.Resources.Requests[r]; !ok {
			t.Errorf("no %s request", r)
		}
		if _, ok := c.Resources.Limits[r]; !ok {
			t.Errorf("no %s limit", r)
		}
	}
	args := c.Args
	if i := slices.Index(args, "-o"); i < 0 || i+1 >= len(args) || args[i+1] != "json" || args[0] != "run" {
		t.Errorf("args %v, want run … -o json", args)
	}
	// Every mount is read-only but /tmp; config.toml comes from the runner's Secret.
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
	}
	mountOf := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mountOf[m.MountPath] = m
		if m.MountPath != "/tmp" && !m.ReadOnly {
			t.Errorf("%s is mounted read-write", m.MountPath)
		}
	}
	flag := func(name string) string {
		i := slices.Index(args, name)
		if i < 0 || i+1 >= len(args) {
			t.Fatalf("args %v lack %s", args, name)
		}
		return args[i+1]
	}
	cfg := mountOf[filepath.Dir(flag("--config"))]
	if v := vols[cfg.Name]; v.Secret == nil || v.Secret.SecretName != "code-runner-config" ||
		len(v.Secret.Items) != 1 || v.Secret.Items[0].Key != "config.toml" || v.Secret.Items[0].Path != filepath.Base(flag("--config")) {
		t.Errorf("--config %s is not config.toml of the Secret code-runner-config: %+v", flag("--config"), v)
	}
	kc := mountOf[filepath.Dir(flag("--kubeconfig"))]
	if v := vols[kc.Name]; v.ConfigMap == nil || v.ConfigMap.Name != cm.Name {
		t.Errorf("--kubeconfig %s is not from the ConfigMap %s: %+v", flag("--kubeconfig"), cm.Name, v)
	}
	text, ok := cm.Data[filepath.Base(flag("--kubeconfig"))]
	if !ok {
		t.Fatalf("the ConfigMap has no key %s", filepath.Base(flag("--kubeconfig")))
	}
	kcfg, err := clientcmd.Load([]byte(text))
	if err != nil {
		t.Fatalf("the ConfigMap's kubeconfig does not load: %v", err)
	}
	ctx := kcfg.Contexts[kcfg.CurrentContext]
	if ctx == nil || kcfg.Clusters[ctx.Cluster] == nil || kcfg.AuthInfos[ctx.AuthInfo] == nil {
		t.Fatalf("the kubeconfig's current context %q does not resolve", kcfg.CurrentContext)
	}
	const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"
	if cl := kcfg.Clusters[ctx.Cluster]; cl.Server != "https://kubernetes.default.svc" || cl.CertificateAuthority != saDir+"/ca.crt" {
		t.Errorf("cluster %+v: want the in-cluster server and the mounted CA", cl)
	}
	if u := kcfg.AuthInfos[ctx.AuthInfo]; u.TokenFile != saDir+"/token" || u.Token != "" || len(u.ClientKeyData) > 0 {
		t.Errorf("user %+v: want the mounted token file and no secret", u)
	}
	if pod.AutomountServiceAccountToken == nil || !*pod.AutomountServiceAccountToken {
		t.Errorf("the token the kubeconfig names is not mounted")
	}
	// --skip names checks that exist.
	ids := map[string]bool{}
	for _, c := range all.Checks() {
		ids[c.ID] = true
	}
	for _, id := range strings.Split(flag("--skip"), ",") {
		if !ids[id] {
			t.Errorf("--skip %s: no such check", id)
		}
	}
	// The exit codes that are a verdict fail the Job without a retry.
	pfp := cj.Spec.JobTemplate.Spec.PodFailurePolicy
	if pfp == nil || len(pfp.Rules) == 0 || pfp.Rules[0].Action != batchv1.PodFailurePolicyActionFailJob ||
		pfp.Rules[0].OnExitCodes == nil || !slices.Equal(pfp.Rules[0].OnExitCodes.Values, []int32{1, 2}) {
		t.Errorf("podFailurePolicy %+v: want FailJob on exit codes 1 and 2", pfp)
	}

	// The optional cluster-wide read access.
	var cr *rbacv1.ClusterRole
	var crb *rbacv1.ClusterRoleBinding
	for _, o := range objects(t, clusterRead) {
		switch o := o.(type) {
		case *rbacv1.ClusterRole:
			cr = o
		case *rbacv1.ClusterRoleBinding:
			crb = o
		default:
			t.Errorf("%s: unexpected %T", clusterRead, o)
		}
	}
	if cr == nil || crb == nil {
		t.Fatalf("%s lacks the ClusterRole or its binding", clusterRead)
	}
	checkReadOnly(t, "ClusterRole "+cr.Name, cr.Rules)
	if crb.RoleRef.Name != cr.Name || len(crb.Subjects) != 1 || crb.Subjects[0].Name != sa.Name || crb.Subjects[0].Namespace != ns {
		t.Errorf("the ClusterRoleBinding does not bind %s to %s/%s: %+v %+v", cr.Name, ns, sa.Name, crb.RoleRef, crb.Subjects)
	}
}

// The negative control of TestManifests' decoding: a misspelt field is an
// error, not silently dropped.
func TestManifestDecodingIsStrict(t *testing.T) {
	dir := t.TempDir()
	broken := strings.Replace(read(t, manifest), "readOnlyRootFilesystem: true", "readOnlyRootFileSystem: true", 1)
	if broken == read(t, manifest) {
		t.Fatal("the mutation changed nothing")
	}
	p := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(p, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	codecs := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict)
	dec := codecs.UniversalDeserializer()
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(broken)))
	failed := false
	for {
		doc, err := r.Read()
		if err == io.EOF {
			break
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		if _, _, err := dec.Decode(doc, nil, nil); err != nil && strings.Contains(err.Error(), "readOnlyRootFileSystem") {
			failed = true
		}
	}
	if !failed {
		t.Error("a misspelt field decoded without an error")
	}
}

// rules is the shape of a Prometheus rule file.
type rules struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert       string            `json:"alert"`
			Expr        string            `json:"expr"`
			For         string            `json:"for,omitempty"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

// TestPrometheusRules: the alerts exist, use only metrics doctor
// writes, and (with promtool) load and pass their unit tests.
func TestPrometheusRules(t *testing.T) {
	var rf rules
	if err := yaml.UnmarshalStrict([]byte(read(t, rulesFile)), &rf); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	known := map[string]bool{metrics.CheckStatus: true, metrics.Findings: true, metrics.CheckDuration: true,
		metrics.RunDuration: true, metrics.LastRunTimestamp: true, metrics.CertExpiry: true,
		metrics.RunnerConfigReloadErrors: true, metrics.RunnerRequestJobRefused: true, metrics.RunnerHealthCheckFailures: true,
		metrics.RunnerSystemFailedJobs: true, metrics.RunnerSlotsUsed: true}
	alerts := map[string]string{}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			alerts[r.Alert] = r.Expr
			for _, name := range regexp.MustCompile(`doctor_[a-z_]+`).FindAllString(r.Expr, -1) {
				if !known[name] {
					t.Errorf("alert %s uses %s, which doctor does not write", r.Alert, name)
				}
			}
			if r.Annotations["summary"] == "" || r.Labels["severity"] == "" {
				t.Errorf("alert %s lacks a summary or a severity", r.Alert)
			}
		}
	}
	for name, metric := range map[string]string{
		"DoctorNotRunRecently":         metrics.LastRunTimestamp,
		"DoctorFinding":                metrics.Findings,
		"DoctorCertificateExpiresSoon": metrics.CertExpiry,
		// What the runner itself counted (runner-metrics).
		"DoctorRunnerJobRequestsRefused":   metrics.RunnerRequestJobRefused,
		"DoctorRunnerConfigReloadRejected": metrics.RunnerConfigReloadErrors,
		"DoctorRunnerSystemFailures":       metrics.RunnerSystemFailedJobs,
		"DoctorRunnerSaturated":            metrics.RunnerSlotsUsed,
	} {
		if !strings.Contains(alerts[name], metric) {
			t.Errorf("no alert %s on %s (alerts: %v)", name, metric, alerts)
		}
	}

	t.Run("promtool", func(t *testing.T) {
		if _, err := exec.LookPath("promtool"); err != nil {
			missing(t, "promtool is not installed here, so the rules are not loaded nor their alerts tested (apt-get install prometheus)")
		}
		if out, err := exec.Command("promtool", "check", "rules", rulesFile).CombinedOutput(); err != nil {
			t.Fatalf("promtool check rules: %v\n%s", err, out)
		}
		if out, err := exec.Command("promtool", "test", "rules", rulesTests).CombinedOutput(); err != nil {
			t.Fatalf("promtool test rules: %v\n%s", err, out)
		}
		// The negative control: a rule that alerts a day early fails its
		// test, so the test can fail.
		dir := t.TempDir()
		broken := strings.Replace(read(t, rulesFile), "- time() < 3600", "- time() < 86400", 1)
		if broken == read(t, rulesFile) {
			t.Fatal("the mutation changed nothing")
		}
		if err := os.WriteFile(filepath.Join(dir, rulesFile), []byte(broken), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rulesTests), []byte(read(t, rulesTests)), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("promtool", "test", "rules", rulesTests)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("promtool test rules passed a rule that alerts a day early:\n%s", out)
		}
	})
}

// missing skips a sub-test whose tool this machine lacks, but fails it under
// the README's test command (scripts/test-all.sh sets DOCTOR_REQUIRE_TOOLS=1
// and installs them), so CI never passes without having run it.
func missing(t *testing.T, why string) {
	t.Helper()
	tools.Missing(t, why)
}
