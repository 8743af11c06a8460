// Package redact keeps secrets out of everything doctor prints or saves,
// by one mechanism: Text is the net every reported string passes through;
// DescribeString shows a value only when it cannot be a secret and
// otherwise describes it; StandIn and StandInLike replace a secret in a
// bundle by a value that evidence describes the same way. The finders
// (ReplaceTokens, ReplaceURLPasswords, ReplaceSecretValues) serve both.
package redact
