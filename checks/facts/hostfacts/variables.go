package hostfacts

import "strings"

// A bundle keeps the value of an environment variable only when a check
// reads it; every other value becomes a stand-in under its name. These are
// the names, found where the checks look them up (Environ.Lookup,
// EnvironmentValue, environmentValue, ParseEnviron(…)[…]), and
// TestVariablesReadAreListed fails when a check looks up one that is not
// here.

// processVariables are the runner process's variables checks read: from
// /proc/<pid>/environ, a unit's Environment= and EnvironmentFile=.
var processVariables = map[string]bool{
	"KUBECONFIG": true, "HOME": true, "PATH": true, "CONFIG_FILE": true,
	"KUBERNETES_SERVICE_HOST": true, "KUBERNETES_SERVICE_PORT": true,
	"DOCKER_HOST": true, "DOCKER_CERT_PATH": true, "DOCKER_TLS_VERIFY": true,
	// docker-api-version: the API version the runner's client is pinned to;
	// runner-metrics: the run command's --listen-address.
	"DOCKER_API_VERSION": true, "LISTEN_ADDRESS": true,
	"FLEETING_PLUGIN_PATH": true,
	// What systemd sets for a unit with User= (unitEnviron).
	"USER": true, "LOGNAME": true, "SHELL": true,
}

// ProcessVariableRead says a check reads the value of the runner
// process's variable name.
func ProcessVariableRead(name string) bool { return processVariables[name] }

// jobVariables are the [[runners]] environment entries checks read: the
// job's KUBECONFIG and CI_DEBUG_SERVICES, and feature flags (FF_*).
var jobVariables = map[string]bool{"KUBECONFIG": true, "CI_DEBUG_SERVICES": true}

// JobVariableRead says a check reads the value of the job environment's
// variable name.
func JobVariableRead(name string) bool {
	return jobVariables[name] || strings.HasPrefix(name, "FF_")
}
