package runnerconfig

import (
	"testing"
)

func TestFeatureFlag(t *testing.T) {
	tests := []struct {
		name   string
		r      *Runner
		flag   string
		on     bool
		source string
	}{
		{"nil runner: default", nil, FFUseLegacyKubernetesExecutionStrategy, false, SourceDefault},
		{"unset: default off", &Runner{}, FFKubernetesHonorEntrypoint, false, SourceDefault},
		{"unset: default on", &Runner{}, "FF_USE_POD_ACTIVE_DEADLINE_SECONDS", true, SourceDefault},
		{"[runners.feature_flags]", &Runner{FeatureFlags: map[string]bool{FFWaitForPodToBeReachable: true}}, FFWaitForPodToBeReachable, true, SourceFeatureFlags},
		{"[runners.feature_flags] false over environment true",
			&Runner{FeatureFlags: map[string]bool{FFPrintPodEvents: false}, Environment: []string{"FF_PRINT_POD_EVENTS=true"}},
			FFPrintPodEvents, false, SourceFeatureFlags},
		{"environment true", &Runner{Environment: []string{"FF_PRINT_POD_EVENTS=true"}}, FFPrintPodEvents, true, SourceEnvironment},
		{"environment ParseBool forms", &Runner{Environment: []string{"FF_PRINT_POD_EVENTS=T"}}, FFPrintPodEvents, true, SourceEnvironment},
		{"environment false over a default true", &Runner{Environment: []string{"FF_TIMESTAMPS=0"}}, "FF_TIMESTAMPS", false, SourceEnvironment},
		{"environment last entry wins", &Runner{Environment: []string{"FF_PRINT_POD_EVENTS=true", "FF_PRINT_POD_EVENTS=false"}}, FFPrintPodEvents, false, SourceEnvironment},
		{"environment unparsable: default", &Runner{Environment: []string{"FF_PRINT_POD_EVENTS=on"}}, FFPrintPodEvents, false, SourceDefault},
		{"environment empty: default", &Runner{Environment: []string{"FF_PRINT_POD_EVENTS="}}, FFPrintPodEvents, false, SourceDefault},
		{"environment entry without =: ignored", &Runner{Environment: []string{"FF_PRINT_POD_EVENTS"}}, FFPrintPodEvents, false, SourceDefault},
		{"environment key is case-sensitive", &Runner{Environment: []string{"ff_print_pod_events=true"}}, FFPrintPodEvents, false, SourceDefault},
		{"environment value expanded", &Runner{Environment: []string{"WANT=true", "FF_PRINT_POD_EVENTS=$WANT"}}, FFPrintPodEvents, true, SourceEnvironment},
		{"environment value expanded against flag defaults", &Runner{Environment: []string{"FF_PRINT_POD_EVENTS=${FF_TIMESTAMPS}"}}, FFPrintPodEvents, true, SourceEnvironment},
		{"unknown flag: off whatever is set", &Runner{FeatureFlags: map[string]bool{"FF_SKIP_NOOP_BUILD_STAGES": true}}, "FF_SKIP_NOOP_BUILD_STAGES", false, SourceDefault},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			on, src := FeatureFlag(tc.r, tc.flag)
			if on != tc.on || src != tc.source {
				t.Errorf("FeatureFlag(%s) = %v, %q; want %v, %q", tc.flag, on, src, tc.on, tc.source)
			}
		})
	}
}
