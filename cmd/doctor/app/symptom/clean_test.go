package symptom

import (
	"strings"
	"testing"
)

func TestCleanStripsColoursAndSectionMarkers(t *testing.T) {
	for raw, want := range map[string]string{
		// The runner's SoftErrorln: ANSI_BOLD_RED "ERROR: " … ANSI_RESET (common/buildlogger, v19.3.0).
		"\x1b[31;1mERROR: Job failed: image pull failed: Back-off\x1b[0;m": "ERROR: Job failed: image pull failed: Back-off",
		// A section heading as GitLab's raw log has it.
		"\x1b[0Ksection_start:1764590400:prepare_executor\r\x1b[0K\x1b[0K\x1b[36;1mPreparing the \"kubernetes\" executor\x1b[0;m\x1b[0;m": "Preparing the \"kubernetes\" executor",
		"\x1b[0Ksection_start:1764590400:step_script[collapsed=true]\r\x1b[0KExecuting":                                                   "Executing",
		"\x1b[0Ksection_end:1764590599:step_script\r\x1b[0K":                                                                              "",
		// Pasted from a browser, the ESC bytes lost.
		"[0;m[31;1mERROR: Preparation failed: prepare failed": "ERROR: Preparation failed: prepare failed",
		// CRLF and a progress display.
		"Job succeeded\r":              "Job succeeded",
		"Downloading 10%\rDownloading": "Downloading 10% Downloading",
		// What looks like a code only inside brackets of its own stays.
		"[Kubernetes] pods[0]": "[Kubernetes] pods[0]",
		// An OSC hyperlink.
		"\x1b]8;;https://example.invalid\x07link\x1b]8;;\x07": "link",
	} {
		if got := Clean(raw); got != want {
			t.Errorf("Clean(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestRedactRemovesTokensAndURLCredentials(t *testing.T) {
	got := Redact("fatal: unable to access 'https://gitlab-ci-token:glcbt-64_abcdefghijklmnop@gitlab.example.invalid/g/p.git/': Could not resolve host: gitlab.example.invalid")
	if want := "fatal: unable to access 'https://<redacted>@gitlab.example.invalid/g/p.git/': Could not resolve host: gitlab.example.invalid"; got != want {
		t.Errorf("Redact: %q, want %q", got, want)
	}
}

// The forms a runner line takes on its way to an operator's paste, each
// read as the runner's own format prints it.
func TestCleanReadsJournaldSyslogAndTheRunnersLogFormats(t *testing.T) {
	const runner = "FATAL: Service run failed  error=decoding configuration file: toml: line 1"
	for raw, want := range map[string]string{
		// rsyslog's escaped ESC in /var/log/syslog (voxpupuli/puppet-gitlab_ci_runner#141).
		"Apr 17 15:57:31 runner01 gitlab-runner[1701482]: #033[31;1mFATAL: Service run failed#033[0;m  #033[31;1merror#033[0;m=decoding configuration file: toml: line 1": "Apr 17 15:57:31 runner01 gitlab-runner[1701482]: " + runner,
		// JSON's escape, as ansible prints the command's output (riemers/ansible-gitlab-runner#88).
		`\u001b[31;1mFATAL: toml: cannot load TOML value\u001b[0;m`: "FATAL: toml: cannot load TOML value",
		// A terminal's caret notation (cat -v, less).
		"^[[31;1mERROR: Checking for jobs... forbidden^[[0;m": "ERROR: Checking for jobs... forbidden",
		// log_format = "json": logrus' JSONFormatter, keys sorted.
		`{"error":"decoding configuration file: toml: line 1","level":"fatal","msg":"Service run failed","time":"2026-12-01T09:00:07Z"}`: runner,
		// in journald, with a colour JSON-escaped inside a value.
		`Dec 01 09:00:07 host gitlab-runner[812]: {"error":"\u001b[31;1mdecoding configuration file: toml: line 1","level":"fatal","msg":"Service run failed"}`: "Dec 01 09:00:07 host gitlab-runner[812]: " + runner,
		// the record pasted without its braces (cattle-ops/terraform-aws-gitlab-runner#1143).
		`"level":"error","msg":"Checking for jobs... forbidden","runner":"GR13","status":"POST https://gitlab.example.invalid/api/v4/jobs/request: 403 Forbidden"`: "ERROR: Checking for jobs... forbidden  runner=GR13 status=POST https://gitlab.example.invalid/api/v4/jobs/request: 403 Forbidden",
		// and cut short: its escapes undone.
		`"error","msg":"Runner \"https://gitlab.example.invalid\" is unhealthy and will be disabled for 1h0m0s seconds`: `"error","msg":"Runner "https://gitlab.example.invalid" is unhealthy and will be disabled for 1h0m0s seconds`,
		// log_format = "text": logrus' TextFormatter.
		`time="2026-12-01T09:00:07Z" level=fatal msg="Service run failed" error="decoding configuration file: toml: line 1"`: runner,
		// Text that only looks like a field stays.
		"level=3 of the build": "level=3 of the build",
	} {
		if got := Clean(raw); got != want {
			t.Errorf("Clean(%q)\n = %q\nwant %q", raw, got, want)
		}
	}
}

// FuzzClean: whatever a line holds, Clean ends, adds no ESC byte (an
// escaped code goes whole), leaves no line break, and grows a line by at
// most a constant per field it renders.
func FuzzClean(f *testing.F) {
	for _, s := range []string{
		"#033[31;1mERROR: x#033[0;m", `\u001b[0;m`, "^[[0K", `{"msg":"m","level":"error","a":{"b":[1,2]}}`,
		`"level":"error","msg":"x\"y"`, `time="t" level=info msg="a \"b\"" k=v`, "section_start:1:a\r\x1b[0K",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		got := Clean(line)
		if strings.Contains(got, "\x1b") && !strings.Contains(line, "\x1b") && !strings.Contains(line, `\u001`) ||
			strings.Contains(got, "\n") || strings.HasSuffix(got, "\r") {
			t.Fatalf("Clean(%q) = %q", line, got)
		}
		if len(got) > 2*len(line)+16 {
			t.Fatalf("Clean(%q) grew to %d bytes", line, len(got))
		}
	})
}
