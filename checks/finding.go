package checks

// Evidence is one observation behind a finding: where it was seen and what.
// Detail describes secrets (type, subject, expiry) and never contains them.
type Evidence struct {
	Source string `json:"source"` // "/proc/4242/environ", "config.toml:9", "GET /api/v1/nodes"
	Detail string `json:"detail"`
}

// Finding is data: one diagnosis made by one check.
type Finding struct {
	Check    string     `json:"check"`
	Severity Severity   `json:"severity"`
	Title    string     `json:"title"`
	Cause    string     `json:"cause"`
	Evidence []Evidence `json:"evidence"`
	Fix      Steps      `json:"fix"`
	Docs     string     `json:"docs"`
	// CausedBy names the check whose failure explains this one, when the
	// reporting check knows it (api-auth knows a 401 with past dates is
	// cert-expiry's). The report fills it from Explains otherwise.
	CausedBy string `json:"causedBy"`
	// Runner is the runner the finding is about; nil for a host-wide one. A
	// per-runner check's findings carry its runner without saying so.
	Runner *RunnerRef `json:"runner"`
}

// Observation is a measured value a check saw on its way, pass or fail: a
// certificate's expiry for the health cron's metrics, say. Like findings,
// it carries its runner, and never a secret.
type Observation struct {
	Name   string            `json:"name"`   // "cert_expiry_timestamp_seconds"
	Labels map[string]string `json:"labels"` // {"subject": "CN=did:plc:…"}
	Value  float64           `json:"value"`
	Runner *RunnerRef        `json:"runner"`
}

// DocsAnchor is where a check's README section lives.
func DocsAnchor(id string) string { return "README.md#" + id }
