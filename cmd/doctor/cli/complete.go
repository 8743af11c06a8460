package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/socialwebcomputer/doctor/checks/all"
)

// completeCheckList completes the last ID of a comma-separated list
// (--only, --skip), leaving out the IDs already in it.
func completeCheckList(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	prefix, cur := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		prefix, cur = toComplete[:i+1], toComplete[i+1:]
	}
	have := map[string]bool{}
	for _, id := range strings.Split(prefix, ",") {
		have[id] = true
	}
	var out []cobra.Completion
	for _, c := range all.Checks() {
		if !have[c.ID] && strings.HasPrefix(c.ID, cur) {
			out = append(out, cobra.CompletionWithDesc(prefix+c.ID, c.Title))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeIgnore completes the ID of --ignore ID:reason.
func completeIgnore(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if strings.ContainsAny(toComplete, ":@") {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, c := range all.Checks() {
		if strings.HasPrefix(c.ID, toComplete) {
			out = append(out, cobra.CompletionWithDesc(c.ID+":", c.Title))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeCheckID completes explain's one argument.
func completeCheckID(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, c := range all.Checks() {
		if strings.HasPrefix(c.ID, toComplete) {
			out = append(out, cobra.CompletionWithDesc(c.ID, c.Title))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
