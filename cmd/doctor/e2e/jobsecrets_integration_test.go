//go:build integration

package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// Secrets of other teams' jobs, planted in the pods doctor lists (the
// runner namespace's and every Pending pod of the cluster) by every route
// a pod carries one that no check reads: env values under names that do
// not look secret, args, command, annotations (the last-applied
// configuration among them), and a Secret's data where a quota makes
// doctor list the namespace's Secrets.
var jobSecrets = map[string]string{
	"SMTP_PASS":             "smtpPw7Kq2Zm9Tx4Lb6Wn",
	"GITHUB_PAT":            "ghp_Gh8Qz3Lm6Tx1Wk4Pn9Rb2Vc5",
	"KUBE_CONFIG":           "users: [{user: {token: KcfgTok3Wq9Zm2Lx7TnQ4}}]",
	"SLACK":                 "https://hooks.slack.invalid/services/T0SLK/B0SLK/SlkHook5Qz8Lm1Tx4Wb7",
	"CI_JOB_JWT_V2":         "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJqb2IifQ.JwtSig2Kq7Zm4Tx9Lb1Wn6",
	"arg":                   "ArgPw4Zq8Lm2Tx6Wb9Kn",
	"command":               "CmdTok6Wq1Zm5Tx8Lb3Rn",
	"annotation":            "AnnVal9Kq4Zm7Tx2Lb5Wn",
	"last-applied":          "LastApp3Qz6Lm9Tx1Wb4Kr",
	"other-team-env":        "OthEnv5Zq2Lm8Tx4Wb7Kn",
	"other-team-annotation": "OthAnn8Kq3Zm6Tx1Lb9Wr",
	"secret-data":           "SecData2Wq7Zm4Tx9Lb6Kn",
}

// podWithSecrets carries secrets by every route of a pod spec.
func podWithSecrets(env, annotation string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		c := &p.Spec.Containers[0]
		c.Name = "build"
		c.Command = []string{"sh", "-c", "deploy --token=" + jobSecrets["command"]}
		c.Args = []string{"--password=" + jobSecrets["arg"]}
		for _, name := range []string{"SMTP_PASS", "GITHUB_PAT", "KUBE_CONFIG", "SLACK", "CI_JOB_JWT_V2"} {
			c.Env = append(c.Env, corev1.EnvVar{Name: name, Value: jobSecrets[name]})
		}
		c.Env = append(c.Env, corev1.EnvVar{Name: "TEAM_SETTING", Value: env})
		p.Annotations = map[string]string{
			"team.example/deploy-note": annotation,
			"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"env":[{"name":"DB","value":"` +
				jobSecrets["last-applied"] + `"}]}]}}`,
		}
	}
}

// No job secret of any team leaves the cluster: not in any output format,
// stderr at -v 8, the textfile or any file of the bundle, not as a
// 12-character piece. The pods were read (pending-no-node names the
// runner's own; the Pending pods of another namespace are on the tape),
// the findings are what they are without the secrets (runReport: analyze
// equals live, and the cut run equals the run on whole answers), and no
// log byte was recorded.
func TestNoJobSecretLeavesTheCluster(t *testing.T) {
	env := testenv.Start(t)
	env.BindOwnersToClusterAdmin()
	env.EnsureNamespace("gitlab-runner")
	env.EnsureNamespace("team-b")
	createNodeDNSDaemonSet(t, env)
	rentNode(t, env, "rented-1", "4", "16Gi", 0)
	env.CreatePod("kube-system", "socialweb-node-dns-x1", "rented-1")
	env.SetPodStatus("kube-system", "socialweb-node-dns-x1", testenv.PodRunning())
	env.CreatePod("gitlab-runner", "runner-abc123-project-5-concurrent-0-run", "rented-1", podWithSecrets(jobSecrets["SMTP_PASS"], jobSecrets["annotation"]))
	env.SetPodStatus("gitlab-runner", "runner-abc123-project-5-concurrent-0-run", testenv.PodRunning())
	env.CreatePod("gitlab-runner", "runner-abc123-project-5-concurrent-1-wait", "", podWithSecrets(jobSecrets["SMTP_PASS"], jobSecrets["annotation"]))
	env.CreatePod("team-b", "deploy-api-7f9c", "", podWithSecrets(jobSecrets["other-team-env"], jobSecrets["other-team-annotation"]))
	// A quota on Secrets makes namespace-quota list them (metadata only).
	createQuota(t, env, "gitlab-runner", "objects", rlist("count/secrets", "10"), rlist("count/secrets", "1"))
	_, err := env.Clientset().CoreV1().Secrets("gitlab-runner").Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "runner-abc123-project-5-concurrent-0-tls"},
		Data:       map[string][]byte{"token": []byte(jobSecrets["secret-data"])},
	}, metav1.CreateOptions{})
	cmdtest.NoErr(t, err)

	root := testroot.New(t)
	root.GuideRunner(testroot.GuideConfig, ownerKubeconfig(env, env.URL, time.Now().Add(12*time.Hour)))
	now := time.Now().UTC().Truncate(time.Second)
	outputs := secretRunOutputs(t, root.Dir, now)
	for what, secret := range jobSecrets {
		for name, out := range outputs {
			if piece := secretPiece(out, secret); piece != "" {
				t.Errorf("%s: the %s secret (%q) is in it as %q:\n%s", name, what, secret, piece, around(out, piece))
			}
		}
	}
	// The routes are taken: the runner's Pending job pod is diagnosed, the
	// other team's Pending pod was read, the Secrets were listed.
	if !strings.Contains(outputs["-o json stdout"], "runner-abc123-project-5-concurrent-1-wait") {
		t.Error("the runner's Pending job pod is in no finding: its pods were not read")
	}
	var tape string
	for name, out := range outputs {
		if strings.HasSuffix(name, "tape.json") {
			tape = out
		}
	}
	for _, want := range []string{"deploy-api-7f9c", "/namespaces/gitlab-runner/secrets", "/log?"} {
		if !strings.Contains(tape, want) {
			t.Errorf("the tape holds no %q: the route through it was not taken", want)
		}
	}
	// A log read is recorded with no byte of the log.
	var tp struct {
		HTTP map[string][]*hostio.HTTPRecord `json:"http"`
	}
	cmdtest.NoErr(t, json.Unmarshal([]byte(tape), &tp))
	logs := 0
	for key, recs := range tp.HTTP {
		if strings.Contains(key, "/log?") {
			for _, r := range recs {
				logs++
				if r.Body != "" {
					t.Errorf("%s: the tape holds %q of the log", key, r.Body)
				}
			}
		}
	}
	if logs == 0 {
		t.Error("no log read recorded")
	}
	// The same scenario through runReport: analyze equals live, and the
	// cut run equals the run on whole answers.
	runReport(t, "run", "--root", root.Dir, "-o", "json", "--now", now.Format(time.RFC3339), "--timeout", "60s", "--skip", "gitlab-reachability")
}
