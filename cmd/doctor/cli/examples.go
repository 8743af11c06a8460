package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// examples are each command's Examples section, by command path less
// "doctor": a comment saying what for, then the command as it is typed.
var examples = map[string]string{
	"": `  # Diagnose the runner on this host
  sudo doctor run

  # Try it on a fixture shipped with the source, without network
  doctor run --root testdata/fixtures/guide-config-as-is/root --now 2026-11-29T12:00:00Z --offline

  # Name the checks a failing job's log points to, and run them
  sudo doctor why job.log

  # The same from the failed job's URL: GitLab gives its log and the runner it ran on
  GITLAB_TOKEN=glpat-… sudo -E doctor job https://gitlab.example.com/group/project/-/jobs/42`,
	"run": `  # Diagnose the runner on this host: every check, root causes first
  sudo doctor run

  # Try it on a fixture shipped with the source, without network
  doctor run --root testdata/fixtures/guide-config-as-is/root --now 2026-11-29T12:00:00Z --offline

  # A ticket: the report as markdown, and what the checks read, redacted
  sudo doctor run -o markdown --bundle ticket.tar.gz > ticket.md

  # Only the checks of one runner's kubeconfig, with their evidence
  sudo doctor run --only cert-expiry,api-auth --runner 1 -o wide

  # A health cron: metrics for node_exporter, and only what changed
  sudo doctor run --textfile /var/lib/node_exporter/textfile_collector/doctor.prom --state /var/lib/doctor/state.json --changes-only`,
	"analyze": `  # Re-run every check on a bundle a user attached to a ticket
  doctor analyze ticket.tar.gz

  # The same, as markdown for the reply
  doctor analyze ticket.tar.gz -o markdown`,
	"why": `  # A job log saved from the job's page
  sudo doctor why job.log

  # One line pasted from a job log, in quotes
  sudo doctor why 'namespaces "gitlab-runner" not found'

  # The runner service's journal of the last 24 hours
  sudo doctor why --journal

  # A log on standard input
  journalctl -u gitlab-runner --since -1h | sudo doctor why -`,
	"job": `  # A failed job, by its page's URL: its log, the runner it ran on, and the checks it names
  GITLAB_TOKEN=glpat-… sudo -E doctor job https://gitlab.example.com/group/project/-/jobs/42

  # The same by project and id, the token from a file
  sudo doctor job --gitlab-url https://gitlab.example.com --project group/project --job 42 --token-file ~/.gitlab-token`,
	"trace": `  # Follow the next job pod the runner creates, then start a job
  sudo doctor trace --next

  # Follow one pod, for at most 15 minutes
  sudo doctor trace --pod runner-abc123-project-1-concurrent-0 --timeout 15m`,
	"checks": `  # The catalog, one check a line
  doctor checks

  # With what each check requires and explains
  doctor checks -o wide`,
	"explain": `  # A check's cause, symptom, fix and how to verify it
  doctor explain cert-expiry`,
	"version": `  # The version, commit and Go version
  doctor version

  # The same as JSON
  doctor version -o json`,
	"help": `  # Help for doctor run
  doctor help run`,
	"completion": `  # Complete doctor's commands, flags and check IDs in this bash
  source <(doctor completion bash)`,
	"completion bash": `  # In this shell
  source <(doctor completion bash)

  # For every new shell
  doctor completion bash | sudo tee /etc/bash_completion.d/doctor`,
	"completion zsh": `  # For every new shell
  doctor completion zsh > "${fpath[1]}/_doctor"`,
	"completion fish": `  # For every new shell
  doctor completion fish > ~/.config/fish/completions/doctor.fish`,
	"completion powershell": `  # In this shell
  doctor completion powershell | Out-String | Invoke-Expression`,
}

// setExamples gives every command of the tree its Examples section.
func setExamples(c *cobra.Command) {
	c.Example = examples[strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), "doctor"), " ")]
	for _, sub := range c.Commands() {
		setExamples(sub)
	}
}
