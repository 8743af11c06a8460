package symptom

import "testing"

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
