package runnerconfig

import (
	"os"
	"strconv"
	"strings"
)

// The feature flags the Kubernetes executor's API use depends on
// (helpers/featureflags/flags.go, gitlab-runner v19.3.0).
const (
	FFUseLegacyKubernetesExecutionStrategy = "FF_USE_LEGACY_KUBERNETES_EXECUTION_STRATEGY"
	FFKubernetesHonorEntrypoint            = "FF_KUBERNETES_HONOR_ENTRYPOINT"
	FFWaitForPodToBeReachable              = "FF_WAIT_FOR_POD_TO_BE_REACHABLE"
	FFPrintPodEvents                       = "FF_PRINT_POD_EVENTS"
)

// Where FeatureFlag found a flag's value.
const (
	SourceDefault      = "default"
	SourceFeatureFlags = "[runners.feature_flags]"
	SourceEnvironment  = "environment"
)

// featureFlagDefaults is every flag of helpers/featureflags/flags.go at
// gitlab-runner v19.3.0 with its DefaultValue. A name not listed here is not a
// flag of that version: the runner never puts it in the build's flag map, so
// Build.IsFeatureFlagOn reports it off whatever config.toml says.
var featureFlagDefaults = map[string]bool{
	"FF_NETWORK_PER_BUILD":                        false,
	"FF_USE_LEGACY_KUBERNETES_EXECUTION_STRATEGY": false,
	"FF_USE_DIRECT_DOWNLOAD":                      true,
	"FF_USE_FASTZIP":                              false,
	"FF_DISABLE_UMASK_FOR_DOCKER_EXECUTOR":        false,
	"FF_ENABLE_BASH_EXIT_CODE_CHECK":              false,
	"FF_USE_WINDOWS_LEGACY_PROCESS_STRATEGY":      false,
	"FF_USE_LEGACY_BASH_EVAL":                     false,
	"FF_USE_POWERSHELL_PATH_RESOLVER":             false,
	"FF_USE_DYNAMIC_TRACE_FORCE_SEND_INTERVAL":    false,
	"FF_SCRIPT_SECTIONS":                          false,
	"FF_ENABLE_JOB_CLEANUP":                       false,
	"FF_KUBERNETES_HONOR_ENTRYPOINT":              false,
	"FF_POSIXLY_CORRECT_ESCAPES":                  false,
	"FF_RESOLVE_FULL_TLS_CHAIN":                   false,
	"FF_DISABLE_POWERSHELL_STDIN":                 false,
	"FF_USE_POD_ACTIVE_DEADLINE_SECONDS":          true,
	"FF_USE_ADVANCED_POD_SPEC_CONFIGURATION":      false,
	"FF_SECRET_RESOLVING_FAILS_IF_MISSING":        true,
	"FF_PRINT_POD_EVENTS":                         false,
	"FF_USE_GIT_BUNDLE_URIS":                      true,
	"FF_USE_GIT_NATIVE_CLONE":                     false,
	"FF_USE_DUMB_INIT_WITH_KUBERNETES_EXECUTOR":   false,
	"FF_USE_INIT_WITH_DOCKER_EXECUTOR":            false,
	"FF_LOG_IMAGES_CONFIGURED_FOR_JOB":            false,
	"FF_USE_DOCKER_AUTOSCALER_DIAL_STDIO":         true,
	"FF_CLEAN_UP_FAILED_CACHE_EXTRACT":            false,
	"FF_USE_WINDOWS_JOB_OBJECT":                   false,
	"FF_TIMESTAMPS":                               true,
	"FF_DISABLE_AUTOMATIC_TOKEN_ROTATION":         false,
	"FF_USE_LEGACY_GCS_CACHE_ADAPTER":             false,
	"FF_DISABLE_UMASK_FOR_KUBERNETES_EXECUTOR":    false,
	"FF_USE_LEGACY_S3_CACHE_ADAPTER":              false,
	"FF_GIT_URLS_WITHOUT_TOKENS":                  false,
	"FF_WAIT_FOR_POD_TO_BE_REACHABLE":             false,
	"FF_MASK_ALL_DEFAULT_TOKENS":                  true,
	"FF_EXPORT_HIGH_CARDINALITY_METRICS":          false,
	"FF_USE_FLEETING_ACQUIRE_HEARTBEATS":          false,
	"FF_USE_EXPONENTIAL_BACKOFF_STAGE_RETRY":      true,
	"FF_USE_ADAPTIVE_REQUEST_CONCURRENCY":         true,
	"FF_USE_GITALY_CORRELATION_ID":                true,
	"FF_USE_GIT_PROACTIVE_AUTH":                   false,
	"FF_HASH_CACHE_KEYS":                          false,
	"FF_ENABLE_JOB_INPUTS_INTERPOLATION":          true,
	"FF_USE_JOB_ROUTER":                           false,
	"FF_SCRIPT_TO_STEP_MIGRATION":                 false,
	"FF_USE_PARALLEL_CACHE_TRANSFER":              false,
	"FF_USE_PARALLEL_ARTIFACT_TRANSFER":           false,
	"FF_CONCRETE":                                 false,
	"FF_SUSPENDABLE_ENVIRONMENTS":                 false,
	"FF_USE_NATIVE_CONTAINER_STOP":                false,
}

// FeatureFlag resolves a runner feature flag as the runner does: [runners.feature_flags] and FF_* in environment, with the version's default; source says where the value came from ("default", "[runners.feature_flags]", "environment").
//
// This is populateFeatureFlags in common/build_settings.go (v19.3.0): the
// flag starts at its DefaultValue; a key in [runners.feature_flags] wins over
// everything ("runner setting takes precedence if defined"); otherwise the
// last NAME=value among the job's variables, parsed with strconv.ParseBool,
// replaces the default, and a value ParseBool rejects leaves the default in
// place (the job log shows "NAME: could not parse feature flag, expected bool,
// got value"). The variables are, in order, the flag defaults, the [[runners]]
// environment entries (parseVariable: split at the first "=", entries without
// one are dropped), then the job's own variables, expanded once with
// os.Expand. Doctor sees only config.toml, so a job or project variable can
// still override an "environment" or "default" answer; a
// [runners.feature_flags] answer is final.
func FeatureFlag(r *Runner, name string) (on bool, source string) {
	def, known := featureFlagDefaults[name]
	if !known {
		return false, SourceDefault
	}
	if r == nil {
		return def, SourceDefault
	}
	if v, ok := r.FeatureFlags[name]; ok {
		return v, SourceFeatureFlags
	}
	raw, ok := EnvironmentValue(r, name)
	if !ok {
		return def, SourceDefault
	}
	v, err := strconv.ParseBool(raw)
	if err != nil {
		return def, SourceDefault
	}
	return v, SourceEnvironment
}

// environmentValue is the value a job sees for name from the [[runners]]
// environment, expanded the way spec.Variables.Expand does it: one os.Expand
// pass against the variable list (the flag defaults, then the environment
// entries), the last entry of a name winning.
func EnvironmentValue(r *Runner, name string) (string, bool) {
	type kv struct{ k, v string }
	var vars []kv
	for k, v := range featureFlagDefaults {
		vars = append(vars, kv{k, strconv.FormatBool(v)})
	}
	found := -1
	for _, e := range r.Environment {
		k, v, ok := strings.Cut(e, "=")
		if !ok {
			continue
		}
		if k == name {
			found = len(vars)
		}
		vars = append(vars, kv{k, v})
	}
	if found < 0 {
		return "", false
	}
	lookup := func(key string) string {
		switch key {
		case "$":
			return key
		case "*", "#", "@", "!", "?", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9":
			return ""
		}
		for i := len(vars) - 1; i >= 0; i-- {
			if vars[i].k == key {
				return vars[i].v
			}
		}
		return ""
	}
	return os.Expand(vars[found].v, lookup), true
}
