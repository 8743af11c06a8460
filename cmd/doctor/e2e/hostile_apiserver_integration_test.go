//go:build integration

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/runnerconfig"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/docshape"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
	"github.com/socialwebcomputer/doctor/testkit/shellshape"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// TestHostileValuesOnARealAPIServer proves on a real kube-apiserver that
// what a kubeconfig or the apiserver hands doctor cannot turn a fix into
// something else. The runner's kubeconfig names its server with a fragment
// that spells a command (right after the port, where client-go drops it
// and connects), its identity is a client certificate whose CN holds a newline, both
// quotes and the same command, and config.toml's namespace and pause pod
// PriorityClass carry a command and a second YAML document. Every fix of
// every run is checked (no system path changed, every shell block parses),
// and pasted into an interactive bash (as a terminal paste runs it: a line
// that fails does not end the shell) with a real kubectl and a real touch:
// the marker file the values spell never appears, and the cluster gains
// exactly what the fix means and nothing else.
func TestHostileValuesOnARealAPIServer(t *testing.T) {
	kubectl := testenv.Bin(t, "kubectl")
	env := testenv.Start(t)
	env.BindOwnersToClusterAdmin()
	const ns = "gitlab-runner" // testroot.GuideConfig's
	env.EnsureNamespace(ns)

	dir := t.TempDir()
	marker := filepath.Join(dir, "MARKER")
	touch := "$(touch " + marker + ")"
	// The server as the runner's kubeconfig names it, a fragment right
	// after the port. client-go sends no fragment (rest.NewRESTClient
	// clears it), but only if clientcmd leaves the server alone: it
	// re-parses a server with url.ParseRequestURI, which knows no
	// fragment, and one whose path is longer than "/" becomes that path
	// (k8s.io/client-go tools/clientcmd/client_config.go, v0.37.2). So
	// "https://host:port/#$(...)" prefixes every request's path with
	// "/%23$(...)" and reaches no API; "https://host:port#$(touch /x)"
	// does not parse as a request URI (its authority runs to the first
	// "/", the marker's), is kept as written, and reaches env.URL.
	server := env.URL + "#" + touch
	// The runner's identity: a client certificate the apiserver trusts,
	// whose CN (the user name) holds a newline, both quotes and a command.
	user := "ci-runner\"'\n" + touch
	now := time.Now()
	userCert, userKey := env.MintClient(user, nil, now.Add(-time.Hour), now.Add(12*time.Hour))
	adminCert, adminKey := env.AdminCertPEM()
	runnerKC := testpki.Kubeconfig("tenant-ci", server, env.CAPEM, userCert, userKey)
	// The operator's kubeconfig: an admin context and the runner's own,
	// both at the runner's server entry (fragment and all), in two files
	// KUBECONFIG merges; the current context is the first file's.
	writeKC := func(name string, cert, key []byte) string {
		p := filepath.Join(dir, name+".kubeconfig")
		cmdtest.NoErr(t, os.WriteFile(p, testpki.Kubeconfig(name, server, env.CAPEM, cert, key), 0o600))
		return p
	}
	adminFile, runnerFile := writeKC("admin", adminCert, adminKey), writeKC("runner", userCert, userKey)
	adminKC := func(current string) string {
		if current == "admin" {
			return adminFile + ":" + runnerFile
		}
		return runnerFile + ":" + adminFile
	}

	// client-go loads the server as written and still reaches the
	// apiserver, which names the identity exactly as the CN holds it.
	loaded, err := clientcmd.Load(runnerKC)
	cmdtest.NoErr(t, err)
	if got := loaded.Clusters["tenant-ci"].Server; got != server {
		t.Fatalf("the kubeconfig's server reads back as %q, not %q", got, server)
	}
	restCfg, err := clientcmd.RESTConfigFromKubeConfig(runnerKC)
	cmdtest.NoErr(t, err)
	cs, err := kubernetes.NewForConfig(restCfg)
	cmdtest.NoErr(t, err)
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("client-go with server %q and CN %q does not reach the apiserver: %v", server, user, err)
	}
	if got := review.Status.UserInfo.Username; got != user {
		t.Fatalf("the apiserver names the identity %q, not the CN %q", got, user)
	}
	assertNoMarker := func(t *testing.T) {
		t.Helper()
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("a value ran as a command: %s exists", marker)
		}
	}

	t.Run("fragment in the server, hostile CN, no RBAC: the grant", func(t *testing.T) {
		env := env.WithT(t)
		rep := runOne(t, testroot.GuideConfig, runnerKC)
		assertFixesHold(t, rep)
		if got := statusOf(rep, "api-auth", 1) + statusOf(rep, "api-auth", 0); got != string(checks.StatusPass) {
			t.Errorf("api-auth is %q: the runner's kubeconfig with a fragment did not reach the apiserver", got)
		}
		fs := findingsOf(rep, "runner-rbac", 1)
		if len(fs) != 1 {
			t.Fatalf("runner-rbac: %d findings, want 1 (the identity has no Role in %s)", len(fs), ns)
		}
		if !strings.Contains(fs[0].Cause, user+" may not ") {
			t.Errorf("runner-rbac does not name the identity as the apiserver does: %s", fs[0].Cause)
		}
		blocks := fs[0].FixSteps.Blocks()
		if len(blocks) != 1 || blocks[0].Kind != checks.KindShell {
			t.Fatalf("runner-rbac's fix: want one shell block, got %#v", fs[0].FixSteps)
		}
		grant := blocks[0].Text
		shape, err := shellshape.Parse(grant)
		cmdtest.NoErr(t, err)
		if !slices.Contains(shape.Words, server) {
			t.Errorf("the server is not one word of the grant:\n%s\n%s", grant, shape)
		}
		if len(shape.Heredocs) != 1 {
			t.Fatalf("the grant has %d heredocs, want its manifest alone:\n%s", len(shape.Heredocs), grant)
		}
		objs, err := docshape.Objects(shape.Heredocs[0])
		cmdtest.NoErr(t, err)
		if len(objs) != 2 || objs[0].GetKind() != "Role" || objs[1].GetKind() != "RoleBinding" {
			t.Fatalf("the grant's manifest is not a Role and a RoleBinding:\n%s", shape.Heredocs[0])
		}
		t.Logf("the grant:\n%s", grant)

		t.Run("ADMIN_CONTEXT unset", func(t *testing.T) {
			// The harshest shell: its current context is an admin of the
			// runner's very cluster, so a line that ran without
			// ADMIN_CONTEXT would grant.
			before := rbacOf(t, env)
			out, calls := pasteWithKubectl(t, kubectl, grant, "KUBECONFIG="+adminKC("admin"))
			const says = "set ADMIN_CONTEXT to a context with admin rights on the cluster of the runner"
			if !strings.Contains(out, says) {
				t.Errorf("the guard did not say %q:\n%s", says, out)
			}
			if after := rbacOf(t, env); !after.equal(before) {
				t.Errorf("the grant acted without ADMIN_CONTEXT: %s\n--- the shell:\n%s", after.diff(before), out)
			}
			if len(calls) > 0 {
				t.Errorf("programs ran without ADMIN_CONTEXT: %q", calls)
			}
			assertNoMarker(t)
		})

		t.Run("ADMIN_CONTEXT set", func(t *testing.T) {
			// The shell's current context is the runner's own identity:
			// only ADMIN_CONTEXT can make the grant succeed.
			before := rbacOf(t, env)
			out, calls := pasteWithKubectl(t, kubectl, grant, "KUBECONFIG="+adminKC("runner"), "ADMIN_CONTEXT=admin")
			if len(calls) > 0 {
				t.Errorf("the grant ran programs other than kubectl: %q", calls)
			}
			after := rbacOf(t, env)
			want := ns + "/gitlab-runner-executor"
			if added := after.added(before); !slices.Equal(added.roles, []string{want}) || !slices.Equal(added.bindings, []string{want}) ||
				len(added.clusterBindings) > 0 || len(added.clusterRoles) > 0 || len(before.added(after).all()) > 0 {
				t.Errorf("the grant changed %s, want the Role and the RoleBinding %s alone\n--- the shell:\n%s", after.diff(before), want, out)
			}
			rb, err := env.Clientset().RbacV1().RoleBindings(ns).Get(t.Context(), "gitlab-runner-executor", metav1.GetOptions{})
			if err != nil {
				t.Fatalf("no RoleBinding after the grant: %v\n%s", err, out)
			}
			wantSubject := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
			if !slices.Equal(rb.Subjects, wantSubject) {
				t.Errorf("the RoleBinding's subjects are %#v, want %#v", rb.Subjects, wantSubject)
			}
			for name, crb := range after.clusterBindingSubjects {
				if slices.ContainsFunc(crb, func(s rbacv1.Subject) bool { return s.Name == user }) {
					t.Errorf("ClusterRoleBinding %s binds the runner's identity", name)
				}
			}
			assertNoMarker(t)
		})

		// The grant is what runner-rbac wanted: it passes now. (This
		// test's last run is this one, whose world holds when the test
		// ends: runReport re-runs it then, with the cut and without.)
		role, err := env.Clientset().RbacV1().Roles(ns).Get(t.Context(), "gitlab-runner-executor", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("no Role after the grant: %v", err)
		}
		r := role.Rules[0]
		resource, sub, _ := strings.Cut(r.Resources[0], "/")
		waitAuthorizedIn(t, env, user, ns, r.Verbs[0], resource, sub)
		again := runOne(t, testroot.GuideConfig, runnerKC)
		assertFixesHold(t, again)
		if got := statusOf(again, "runner-rbac", 1); got != string(checks.StatusPass) {
			t.Errorf("runner-rbac after the grant: %s, want pass: %v", got, findingsOf(again, "runner-rbac", 1))
		}
		assertNoMarker(t)
	})

	t.Run("namespace that is no name", func(t *testing.T) {
		const crb = "hostile-namespace-grant"
		for name, bad := range map[string]string{
			"command": "ci\n" + touch + "'",
			"second document": "ci\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: " + crb +
				"\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\nsubjects:\n- apiGroup: rbac.authorization.k8s.io\n  kind: Group\n  name: system:authenticated",
		} {
			t.Run(name, func(t *testing.T) {
				env := env.WithT(t)
				config := strings.Replace(testroot.GuideConfig, `namespace = "gitlab-runner"`, "namespace = "+tomlString(bad), 1)
				if got := decodedRunner(t, config).Kubernetes.Namespace; got != bad {
					t.Fatalf("config.toml's namespace decodes as %q, not %q", got, bad)
				}
				before := rbacOf(t, env)
				rep := runOne(t, config, runnerKC)
				assertFixesHold(t, rep)
				fs := findingsOf(rep, "namespace", 1)
				if len(fs) != 1 || !strings.Contains(fs[0].Cause, "is not a valid namespace name") {
					t.Errorf("namespace does not report an invalid name: %+v", fs)
				}
				// Neither the namespace nor a piece of it is in a block; the
				// grant is withheld, never a manifest.
				for _, f := range rep.Findings {
					for _, s := range f.FixSteps.Blocks() {
						for _, piece := range []string{marker, "ClusterRoleBinding", crb} {
							if strings.Contains(s.Text, piece) {
								t.Errorf("%s's fix carries %q of the namespace:\n%s", f.Check, piece, s.Text)
							}
						}
					}
				}
				// The identity may do nothing there, so runner-rbac reaches
				// its grant, and withholds it.
				rbacFs := findingsOf(rep, "runner-rbac", 1)
				if len(rbacFs) != 1 || len(rbacFs[0].FixSteps.Blocks()) != 0 ||
					!strings.Contains(rbacFs[0].Fix, "doctor prints no command here: the runner's namespace is not a valid namespace name") {
					t.Errorf("runner-rbac does not withhold its grant for namespace %q: %+v", bad, rbacFs)
				}
				for _, f := range rbacFs {
					for _, s := range f.FixSteps {
						if s.Kind == checks.KindManifest || strings.Contains(s.Text, "apiVersion:") || strings.Contains(s.Text, "kind: Role") {
							t.Errorf("runner-rbac prints a manifest for namespace %q:\n%s", bad, s.Text)
						}
					}
				}
				// Every block of the run, pasted as an administrator would
				// paste it, adds no binding and runs no value.
				out := pasteEveryBlock(t, kubectl, rep, "KUBECONFIG="+adminKC("admin"), "ADMIN_CONTEXT=admin")
				if after := rbacOf(t, env); !after.equal(before) {
					t.Errorf("the run's fixes changed %s\n--- the shell:\n%s", after.diff(before), out)
				}
				if _, err := env.Clientset().RbacV1().ClusterRoleBindings().Get(t.Context(), crb, metav1.GetOptions{}); err == nil {
					t.Errorf("ClusterRoleBinding %s exists", crb)
				}
				assertNoMarker(t)
			})
		}
	})

	t.Run("pause pod PriorityClass that is no name", func(t *testing.T) {
		env := env.WithT(t)
		bad := "gitlab-pause\n" + touch
		config := strings.Replace(pauseConfig, `pause_pod_priority_class_name = "gitlab-pause"`, "pause_pod_priority_class_name = "+tomlString(bad), 1)
		if got := decodedRunner(t, config).Kubernetes.Autoscaler.PausePodPriorityClassName; got != bad {
			t.Fatalf("config.toml's pause_pod_priority_class_name decodes as %q, not %q", got, bad)
		}
		// The owner's identity, which may list what scale-to-zero reads,
		// at the server with the fragment.
		kc := ownerKubeconfig(env, server, time.Now().Add(12*time.Hour))
		classes := func() []string {
			l, err := env.Clientset().SchedulingV1().PriorityClasses().List(t.Context(), metav1.ListOptions{})
			cmdtest.NoErr(t, err)
			var names []string
			for _, pc := range l.Items {
				names = append(names, pc.Name)
			}
			return names
		}
		before, rbacBefore := classes(), rbacOf(t, env)
		rep := runOne(t, config, kc)
		assertFixesHold(t, rep)
		fs := findingsOf(rep, "scale-to-zero", 1)
		if len(fs) != 1 || !strings.Contains(fs[0].Cause, "pause_pod_priority_class_name") || !strings.Contains(fs[0].Cause, "is not a valid object name") {
			t.Errorf("scale-to-zero does not report the invalid name: %+v", fs)
		}
		for _, f := range rep.Findings {
			for _, s := range f.FixSteps.Blocks() {
				if strings.Contains(s.Text, marker) || f.Check == "scale-to-zero" {
					t.Errorf("%s prints a block for the invalid name:\n%s", f.Check, s.Text)
				}
			}
		}
		out := pasteEveryBlock(t, kubectl, rep, "KUBECONFIG="+adminKC("admin"), "ADMIN_CONTEXT=admin")
		if after := classes(); !slices.Equal(after, before) {
			t.Errorf("the run's fixes changed the PriorityClasses: %q, were %q\n--- the shell:\n%s", after, before, out)
		}
		if after := rbacOf(t, env); !after.equal(rbacBefore) {
			t.Errorf("the run's fixes changed %s\n--- the shell:\n%s", after.diff(rbacBefore), out)
		}
		assertNoMarker(t)
	})
}

// decodedRunner is config's only runner, decoded as doctor decodes it.
func decodedRunner(t *testing.T, config string) *runnerconfig.Runner {
	t.Helper()
	cfg, _, err := runnerconfig.Decode([]byte(config))
	if err != nil || len(cfg.Runners) != 1 || cfg.Runners[0].Kubernetes == nil {
		t.Fatalf("config does not decode to one Kubernetes runner: %v\n%s", err, config)
	}
	return cfg.Runners[0]
}

// assertFixesHold is what every fix of a run must be, whatever the values
// behind it: no path it changes is a system path, every shell block parses.
func assertFixesHold(t *testing.T, rep *report.Report) {
	t.Helper()
	for i, f := range rep.Findings {
		where := fmt.Sprintf("finding %d (%s)", i+1, f.Check)
		if err := hostilefix.AssertTouchesNoSystemPath(where, f.FixSteps); err != nil {
			t.Error(err)
		}
		for j, s := range f.FixSteps {
			if s.Kind != checks.KindShell {
				continue
			}
			if _, err := shellshape.Parse(s.Text); err != nil {
				t.Errorf("%s: step %d does not parse as bash: %v\n%s", where, j+1, err, s.Text)
			}
		}
	}
}

// rbacState is every RBAC object of the cluster, by namespace/name.
type rbacState struct {
	roles, bindings, clusterRoles, clusterBindings []string
	clusterBindingSubjects                         map[string][]rbacv1.Subject
}

func rbacOf(t *testing.T, env *testenv.Env) rbacState {
	t.Helper()
	ctx := t.Context()
	rbac := env.Clientset().RbacV1()
	s := rbacState{clusterBindingSubjects: map[string][]rbacv1.Subject{}}
	roles, err := rbac.Roles("").List(ctx, metav1.ListOptions{})
	cmdtest.NoErr(t, err)
	for _, r := range roles.Items {
		s.roles = append(s.roles, r.Namespace+"/"+r.Name)
	}
	rbs, err := rbac.RoleBindings("").List(ctx, metav1.ListOptions{})
	cmdtest.NoErr(t, err)
	for _, r := range rbs.Items {
		s.bindings = append(s.bindings, r.Namespace+"/"+r.Name)
	}
	crs, err := rbac.ClusterRoles().List(ctx, metav1.ListOptions{})
	cmdtest.NoErr(t, err)
	for _, r := range crs.Items {
		s.clusterRoles = append(s.clusterRoles, r.Name)
	}
	crbs, err := rbac.ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	cmdtest.NoErr(t, err)
	for _, r := range crbs.Items {
		s.clusterBindings = append(s.clusterBindings, r.Name)
		s.clusterBindingSubjects[r.Name] = r.Subjects
	}
	for _, l := range [][]string{s.roles, s.bindings, s.clusterRoles, s.clusterBindings} {
		slices.Sort(l)
	}
	return s
}

// added is what s has that before has not.
func (s rbacState) added(before rbacState) rbacState {
	minus := func(a, b []string) []string {
		var out []string
		for _, x := range a {
			if !slices.Contains(b, x) {
				out = append(out, x)
			}
		}
		return out
	}
	return rbacState{roles: minus(s.roles, before.roles), bindings: minus(s.bindings, before.bindings),
		clusterRoles: minus(s.clusterRoles, before.clusterRoles), clusterBindings: minus(s.clusterBindings, before.clusterBindings)}
}

func (s rbacState) all() []string {
	return slices.Concat(s.roles, s.bindings, s.clusterRoles, s.clusterBindings)
}

func (s rbacState) equal(o rbacState) bool {
	return len(s.added(o).all()) == 0 && len(o.added(s).all()) == 0
}

func (s rbacState) diff(before rbacState) string {
	a, r := s.added(before), before.added(s)
	return fmt.Sprintf("added Roles %q, RoleBindings %q, ClusterRoles %q, ClusterRoleBindings %q; removed %q",
		a.roles, a.bindings, a.clusterRoles, a.clusterBindings, r.all())
}

// pasteEveryBlock pastes every shell block of every finding of rep, in
// order, into one shell (pasteWithKubectl) and returns what it printed.
func pasteEveryBlock(t *testing.T, kubectl string, rep *report.Report, env ...string) string {
	t.Helper()
	var blocks []string
	for _, f := range rep.Findings {
		for _, s := range f.FixSteps.Blocks() {
			if s.Kind == checks.KindShell {
				blocks = append(blocks, s.Text)
			}
		}
	}
	out, calls := pasteWithKubectl(t, kubectl, strings.Join(blocks, "\n"), env...)
	t.Logf("%d blocks pasted; programs recorded, not run: %q", len(blocks), calls)
	return out
}

// pasteWithKubectl runs text as a paste into a terminal runs it: an
// interactive bash (history expansion on; a line that fails does not end
// the shell, the next one runs) reading it line by line. Its PATH holds a
// real kubectl and a real touch and nothing else: every other program is
// recorded by command_not_found_handle, not run, and returned (each its
// words). env are the shell's variables besides PATH and HOME. It returns
// what the shell printed, both streams.
func pasteWithKubectl(t *testing.T, kubectl, text string, env ...string) (string, [][]string) {
	t.Helper()
	touch, err := exec.LookPath("touch")
	cmdtest.NoErr(t, err)
	bash, err := exec.LookPath("bash")
	cmdtest.NoErr(t, err)
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	cmdtest.NoErr(t, os.Mkdir(bin, 0o755))
	cmdtest.NoErr(t, os.Symlink(kubectl, filepath.Join(bin, "kubectl")))
	cmdtest.NoErr(t, os.Symlink(touch, filepath.Join(bin, "touch")))
	log := filepath.Join(dir, "argv")
	script := filepath.Join(dir, "paste.sh")
	prelude := "command_not_found_handle() { printf '%s\\0' \"$@\" >> " + fixcode.Quote(log) + "; printf '\\n' >> " + fixcode.Quote(log) + "; return 0; }\n"
	cmdtest.NoErr(t, os.WriteFile(script, []byte(prelude+text+"\n"), 0o600))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "--norc", "--noprofile", "-i", script)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + bin, "HOME=" + dir, "HISTFILE=/dev/null", "TERM=dumb", "LANG=C.UTF-8"}, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) || ctx.Err() != nil {
			t.Fatalf("bash: %v\n%s", err, out.String())
		}
	}
	var calls [][]string
	raw, _ := os.ReadFile(log)
	for _, call := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\x00\n") {
		if call != "" {
			calls = append(calls, strings.Split(strings.TrimSuffix(call, "\x00"), "\x00"))
		}
	}
	return out.String(), calls
}
