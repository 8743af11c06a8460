package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/cmd/doctor/cli"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// The planted-secrets corpus: hosts whose config.toml, kubeconfig and
// runner environment carry secrets by every route that once let one out
// (issue 8). doctor runs on each in every output format with --verbose,
// with a bundle, a textfile and stderr at -v 8, and no output may hold a
// secret, nor any 12-character piece of one.

// planted is one secret and where it was put.
type planted struct{ where, secret string }

// secretHost is a fake host and the secrets planted in it.
type secretHost struct {
	name    string
	root    string
	secrets []planted
	routes  []string // checks that must report, each a route a secret could take
	says    []string // what -o json says in place of secrets
}

// A single-quoted TOML literal keeps a secret free of escapes, so what is
// planted is exactly what is searched for.
const (
	unknownAPIKey     = "ak_Zq81PlnTdApiKey5520x"
	unknownWebhookPw  = "WbhkPw9rQz7LmN2vX4"
	unknownCredential = "CrdXv8Tq2Mn5Lp0Wz3"
	unknownNotes      = "NtsQ7wE3rT9yU1iO5p"
	webhookUser       = "WhUsr2Kq8Zm4Tx6Lp"
	jobAWSSecret      = "wJalrXUtnFEMIK7MDENGbPxRfiCYjob8842"
	jobDatabasePw     = "pgJb5Qw8Rt2Zx9Lm4N"
	s3AccessKey       = "AKIAZQ81PLNTDS3ACCES"
	s3SecretKey       = "s3Sk7Qp2Wm9Xc4Vb6Nz1Ly8Ht3Rj5Fg0Dk"
	runnerToken       = "glrt-Tk4Qm8Zp2Xw6Lc9Vb3Nh7"
	envRunnerToken    = "glrt-EnvTk5Rw1Yq7Mz3Pd8Kj2"
	envAWSSecret      = "EnvAwsSk3Hq9Tz6Wp1Lx8Mc4Vn7Rb2"
	envProxyPw        = "PxyPw4Kd8Qz1Wm6Tn3Rv"
	kubeServerPw      = "KsrvPw2Tq9Lm6Xz3Wb8N"
	kubeServerUser    = "KsrvUsr5Wq1Zm7Tx3"
	hostUser          = "HostUsr8Lq3Zm6Tx1"
	jobDatabaseUser   = "DbUsr4Tq8Zm2Lx6"
	kubeToken         = "KubeTok7Qw3Zp9Lx2Mc5Vb8Nh1Rt4"
	hostPw            = "HostPw6Zq2Lm9Tx4Wb7K"
	badURLPw          = "BadUrlPw3Kq7Zm1Tx5Wn"
	bareValue         = "BareVal8Qz2Lm5Tx9Wk3"
	typeErrValue      = "TypeErr4Wq8Zm2Lx6Tn9"
	decodeKubeValue   = "KubeDec5Rz1Qm7Tx3Wl8Pn"
	pluginEnvSecret   = "PlgEnv9Kz4Qm2Tx7Wb5Lr"
)

func TestNoPlantedSecretInAnyOutput(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	hosts := []secretHost{
		kubeconfigHost(t, now),
		overrideHost(t),
		decodeHost(t, "syntax", "  secret_value = "+bareValue+"\n", planted{"a bare value on a line that does not parse", bareValue}),
		decodeHost(t, "type", "  output_limit = '"+typeErrValue+"'\n", planted{"a string where output_limit is an integer", typeErrValue}),
		kubeconfigDecodeHost(t),
		execPluginHost(t),
	}
	hosts = append(hosts, argvHosts(t)...)
	for _, h := range hosts {
		t.Run(h.name, func(t *testing.T) {
			assertNoPlanted(t, h, secretRunOutputs(t, h.root, now))
		})
	}
}

// assertNoPlanted fails when an output holds one of the host's secrets or
// a 12-character piece of one, or when a route the host plants a secret on
// is not taken: each check that could quote a secret reports, and -o json
// says what it says in its place.
func assertNoPlanted(t *testing.T, h secretHost, outputs map[string]string) {
	t.Helper()
	var rep report.Report
	cmdtest.NoErr(t, json.Unmarshal([]byte(outputs["-o json stdout"]), &rep))
	for _, id := range h.routes {
		if !slices.ContainsFunc(rep.Findings, func(f report.Finding) bool { return f.Check == id }) {
			t.Errorf("%s reports nothing: the route through it is not taken", id)
		}
	}
	for _, want := range h.says {
		if !strings.Contains(outputs["-o json stdout"], want) {
			t.Errorf("-o json does not say %q", want)
		}
	}
	for _, p := range h.secrets {
		for name, out := range outputs {
			if piece := secretPiece(out, p.secret); piece != "" {
				t.Errorf("%s: the secret of %s (%q) is in it as %q:\n%s", name, p.where, p.secret, piece, around(out, piece))
			}
		}
	}
}

// secretPiece is the secret, or a 12-character piece of it, when out
// holds one; "" when it holds none.
func secretPiece(out, secret string) string {
	if len(secret) <= 12 {
		if strings.Contains(out, secret) {
			return secret
		}
		return ""
	}
	for i := 0; i+12 <= len(secret); i++ {
		if strings.Contains(out, secret[i:i+12]) {
			return secret[i : i+12]
		}
	}
	return ""
}

// around is the line of out that holds piece, to show where it leaked.
func around(out, piece string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, piece) {
			if len(l) > 400 {
				i := strings.Index(l, piece)
				l = l[max(0, i-200):min(len(l), i+200)]
			}
			return l
		}
	}
	return ""
}

// secretRunOutputs runs doctor on root in every format with --verbose (the
// json run also writes a bundle, a textfile, a state file and its cache,
// the table run logs at -v 8) and returns each output by name: stdout and
// stderr of every run, every file of the bundle, the textfile, the state
// file and every file under the cache directory. extra are more flags of
// every run.
func secretRunOutputs(t *testing.T, root string, now time.Time, extra ...string) map[string]string {
	t.Helper()
	outputs := map[string]string{}
	dir := t.TempDir()
	for _, format := range []string{"table", "wide", "json", "yaml", "markdown"} {
		args := []string{"run", "--root", root, "-o", format, "--verbose", "--now", now.Format(time.RFC3339),
			"--timeout", "10s", "--request-timeout", "2s", "--resolver", "127.0.0.1:9", "--public-dns", "127.0.0.1:9"}
		args = append(args, extra...)
		bundle, textfile := filepath.Join(dir, "bundle.tar.gz"), filepath.Join(dir, "doctor.prom")
		stateFile, cacheDir := filepath.Join(dir, "state.json"), filepath.Join(dir, "cache")
		switch format {
		case "json":
			args = append(args, "--bundle", bundle, "--textfile", textfile, "--state", stateFile, "--cache-dir", cacheDir)
		case "table":
			args = append(args, "-v", "8")
		}
		var out, errb bytes.Buffer
		cli.Main(args, cli.IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
		outputs["-o "+format+" stdout"] = out.String()
		outputs["-o "+format+" stderr"] = errb.String()
		if format == "json" {
			if out.Len() == 0 {
				t.Fatalf("-o json printed nothing; stderr: %s", errb.String())
			}
			for name, body := range bundleContents(t, bundle) {
				outputs[name] = body
			}
			b, err := os.ReadFile(textfile)
			cmdtest.NoErr(t, err)
			outputs["textfile"] = string(b)
			b, err = os.ReadFile(stateFile)
			cmdtest.NoErr(t, err)
			outputs["state"] = string(b)
			// The cache holds what a run could read (none, when no
			// apiserver answered): every file of it, whatever it is.
			cmdtest.NoErr(t, filepath.WalkDir(cacheDir, func(p string, d fs.DirEntry, err error) error {
				if errors.Is(err, fs.ErrNotExist) || err == nil && d.IsDir() {
					return nil
				}
				if err != nil {
					return err
				}
				b, err := os.ReadFile(p)
				outputs["cache "+strings.TrimPrefix(p, cacheDir)] = string(b)
				return err
			}))
		}
	}
	return outputs
}

// kubeconfigHost is a kubeconfig-shaped runner with secrets in config.toml
// (its token, unknown keys, S3 keys, the job environment), in the runner's
// own environment, and in its kubeconfig (the server URL's userinfo, an
// embedded key and a token).
func kubeconfigHost(t *testing.T, now time.Time) secretHost {
	ca, err := testpki.NewCA("tenant-ci PKI", now.Add(-48*time.Hour), now.Add(10*365*24*time.Hour))
	cmdtest.NoErr(t, err)
	cert, key, err := ca.Client("did:plc:ewvi7nxzyoun6zhxrhs64oiz", []string{"socialweb.computer:cluster-owners"}, now.Add(-time.Hour), now.Add(11*time.Hour))
	cmdtest.NoErr(t, err)
	server := "https://" + kubeServerUser + ":" + kubeServerPw + "@127.0.0.1:1/clusters/root:k3x9q2mf:tenant-ci:clusters"
	kubeconfig := string(testpki.Kubeconfig("tenant-ci", server, ca.CertPEM, cert, key))
	if !strings.Contains(kubeconfig, "client-key-data") {
		t.Fatal("testpki.Kubeconfig no longer embeds the key: plant it another way")
	}
	kubeconfig = strings.Replace(kubeconfig, "    client-key-data:", "    token: "+kubeToken+"\n    client-key-data:", 1)
	config := `concurrent = 2
check_interval = 3

[[runners]]
  name = "planted"
  url = "https://127.0.0.1:1/"
  token = '` + runnerToken + `'
  executor = "kubernetes"
  api_key = '` + unknownAPIKey + `'
  webhook = 'https://hooks:` + unknownWebhookPw + `@chat.example.invalid/x'
  webhook_user_only = 'https://` + webhookUser + `@chat.example.invalid/x'
  credential = '` + unknownCredential + `'
  notes = '` + unknownNotes + `'
  environment = ["AWS_SECRET_ACCESS_KEY=` + jobAWSSecret + `", "DATABASE_URL=postgres://app:` + jobDatabasePw + `@db.example.invalid/app"]
  [runners.kubernetes]
    namespace = "gitlab-runner"
  [runners.cache]
    Type = "s3"
    [runners.cache.s3]
      ServerAddress = "127.0.0.1:9"
      AccessKey = '` + s3AccessKey + `'
      SecretKey = '` + s3SecretKey + `'
      BucketName = "runner-cache"
`
	root := testroot.New(t)
	root.GuideRunner(config, []byte(kubeconfig))
	root.Runner(4242, 0, map[string]string{
		"KUBECONFIG":            testroot.KubeconfigPath,
		"PATH":                  "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin",
		"CI_SERVER_TOKEN":       envRunnerToken,
		"AWS_SECRET_ACCESS_KEY": envAWSSecret,
		"HTTPS_PROXY":           "http://proxyuser:" + envProxyPw + "@127.0.0.1:9",
	})
	secrets := []planted{
		{"the runner token in config.toml", runnerToken},
		{"the unknown key api_key", unknownAPIKey},
		{"the password of the unknown key webhook's URL", unknownWebhookPw},
		{"the unknown key credential", unknownCredential},
		{"an unknown key whose name does not say secret", unknownNotes},
		{"the user (a token) of an unknown key's URL", webhookUser},
		{"AWS_SECRET_ACCESS_KEY in the job environment", jobAWSSecret},
		{"DATABASE_URL's password in the job environment", jobDatabasePw},
		{"the S3 cache AccessKey", s3AccessKey},
		{"the S3 cache SecretKey", s3SecretKey},
		{"a glrt- token in the runner's environ", envRunnerToken},
		{"an S3 key in the runner's environ", envAWSSecret},
		{"the proxy URL's password in the runner's environ", envProxyPw},
		{"the kubeconfig server URL's password", kubeServerPw},
		{"the kubeconfig server URL's user", kubeServerUser},
		{"the kubeconfig user's token", kubeToken},
	}
	return secretHost{name: "kubeconfig runner", root: root.Dir, secrets: append(secrets, keySecrets(t, key)...),
		routes: []string{"config-unknown-keys", "api-auth", "gitlab-reachability"},
		says: []string{"api_key = <string, 23 characters, looks secret>", `notes = <string, 18 characters, looks secret>`,
			`webhook = \"https://chat.example.invalid/x (userinfo removed)\"`, "(server https://127.0.0.1:1/clusters/"}}
}

// keySecrets are pieces of a private key as a kubeconfig embeds it: the
// base64 of its PEM body, and of the PEM whole as client-key-data holds it,
// without the header and trailer every key shares.
func keySecrets(t *testing.T, keyPEM []byte) []planted {
	blk, _ := pem.Decode(keyPEM)
	if blk == nil {
		t.Fatal("testpki made a key that is not PEM")
	}
	body := base64.StdEncoding.EncodeToString(blk.Bytes)
	data := base64.StdEncoding.EncodeToString(keyPEM)
	// A P-256 key in SEC1 DER is 7 bytes of header, the 32-byte private
	// scalar, then the curve's OID and the public key that every reader may
	// know; what is secret is the scalar: PEM body bytes 7..39 are base64
	// characters 12..52 of the body, which begins 31 bytes into the PEM
	// ("-----BEGIN EC PRIVATE KEY-----\n"), so characters 60..108 of the
	// PEM's own base64.
	if blk.Type != "EC PRIVATE KEY" || len(blk.Bytes) < 39 {
		t.Fatalf("testpki made a %s; the offsets below are for an EC P-256 key", blk.Type)
	}
	return []planted{
		{"the client key's private scalar in its PEM body", body[12:52]},
		{"the client key's private scalar in client-key-data", data[60:108]},
	}
}

// overrideHost has three Kubernetes runners: one with [runners.kubernetes]
// host carrying userinfo, one whose url does not parse and carries a
// password, one with KUBECONFIG only in its job environment beside
// secrets. The runner's environ has no KUBECONFIG.
func overrideHost(t *testing.T) secretHost {
	config := `concurrent = 3
check_interval = 3

[[runners]]
  name = "host-set"
  url = "https://127.0.0.1:1/"
  token = "glrt-not-a-real-token-0000"
  executor = "kubernetes"
  [runners.kubernetes]
    host = 'https://` + hostUser + `:` + hostPw + `@127.0.0.1:1'
    namespace = "gitlab-runner"

[[runners]]
  name = "bad-url"
  url = 'https://urluser:` + badURLPw + `@[::1'
  token = "glrt-not-a-real-token-0001"
  executor = "kubernetes"
  [runners.kubernetes]
    namespace = "gitlab-runner"

[[runners]]
  name = "job-env"
  url = "https://127.0.0.1:1/"
  token = "glrt-not-a-real-token-0002"
  executor = "kubernetes"
  environment = ["KUBECONFIG=/etc/gitlab-runner/tenant-ci/kubeconfig.yaml", "AWS_SECRET_ACCESS_KEY=` + jobAWSSecret + `", "DATABASE_URL=postgres://` + jobDatabaseUser + `:` + jobDatabasePw + `@db.example.invalid/app"]
  [runners.kubernetes]
    namespace = "gitlab-runner"
`
	root := testroot.New(t)
	root.Runner(4242, 0, map[string]string{"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin"})
	root.Write("/etc/gitlab-runner/config.toml", config, 0o600)
	return secretHost{name: "host, url and job environment", root: root.Dir, secrets: []planted{
		{"the password of [runners.kubernetes] host", hostPw},
		{"the user of [runners.kubernetes] host", hostUser},
		{"the password of a url that does not parse", badURLPw},
		{"AWS_SECRET_ACCESS_KEY in the job environment", jobAWSSecret},
		{"DATABASE_URL's password in the job environment", jobDatabasePw},
		{"DATABASE_URL's user in the job environment", jobDatabaseUser},
	}, routes: []string{"cluster-override", "gitlab-reachability", "runner-kubeconfig-env"},
		says: []string{`sets host = \"https://127.0.0.1:1\"`, `host = \"https://127.0.0.1:1 (userinfo removed)\"`}}
}

// decodeHost is a runner whose config.toml does not decode because of
// line, which carries a secret the toml message could quote.
func decodeHost(t *testing.T, name, line string, secret planted) secretHost {
	config := strings.Replace(testroot.GuideConfig, "  executor = \"kubernetes\"\n", "  executor = \"kubernetes\"\n"+line, 1)
	if strings.Contains(line, "output_limit") {
		config = strings.Replace(config, "  output_limit = 51200\n", "", 1)
	}
	root := testroot.New(t)
	root.GuideRunner(config, []byte("apiVersion: v1\nkind: Config\n"))
	return secretHost{name: "config.toml " + name + " error", root: root.Dir, secrets: []planted{secret}, routes: []string{"config-decode"}}
}

// kubeconfigDecodeHost has a kubeconfig that does not decode, at a value
// that is a secret.
func kubeconfigDecodeHost(t *testing.T) secretHost {
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: c
users:
- name: u
  user:
    token: [%s]
    password: {x: %s}
`, decodeKubeValue, decodeKubeValue)
	root := testroot.New(t)
	root.GuideRunner(testroot.GuideConfig, []byte(kubeconfig))
	return secretHost{name: "kubeconfig decode error", root: root.Dir, secrets: []planted{{"a kubeconfig value its decoder refuses", decodeKubeValue}},
		routes: []string{"kubeconfig-file"}}
}

// execPluginHost has a kubeconfig whose user runs an exec plugin with a
// secret in its env.
func execPluginHost(t *testing.T) secretHost {
	kubeconfig := execPluginKubeconfig("https://127.0.0.1:1/clusters/root:k3x9q2mf:tenant-ci:clusters", nil, "/usr/local/bin/credential-plugin",
		`["--secret", "`+pluginEnvSecret+`"]`, "[{name: AWS_SECRET_ACCESS_KEY, value: "+pluginEnvSecret+"}]")
	root := testroot.New(t)
	root.GuideRunner(testroot.GuideConfig, []byte(kubeconfig))
	return secretHost{name: "exec plugin", root: root.Dir, secrets: []planted{{"the exec plugin's env and args", pluginEnvSecret}}}
}

// The corpus holds what it says: every secret is in its host's files, so a
// clean output is not a host that lost its secrets.
func TestPlantedSecretsArePlanted(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, h := range []secretHost{kubeconfigHost(t, now), overrideHost(t), kubeconfigDecodeHost(t), execPluginHost(t)} {
		var all strings.Builder
		_ = filepath.Walk(h.root, func(p string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() {
				b, _ := os.ReadFile(p)
				all.Write(b)
			}
			return nil
		})
		// The key's PEM body is there once client-key-data is decoded.
		haystack := all.String()
		for _, l := range strings.Split(all.String(), "\n") {
			if _, v, ok := strings.Cut(l, "client-key-data: "); ok {
				haystack += string(must(base64.StdEncoding.DecodeString(strings.TrimSpace(v))))
			}
		}
		var missing []string
		for _, p := range h.secrets {
			if !strings.Contains(haystack, p.secret) {
				missing = append(missing, p.where)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("%s: not planted: %v", h.name, missing)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
