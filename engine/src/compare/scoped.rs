//! Regression rules of a target or a flow (`RuleScope::Target`, `RuleScope::Flow`): what they
//! look at in a result, found by name.

use std::borrow::Cow;

use crate::plan::regression::RuleScope;
use crate::result::{RunResult, TargetResult};

/// What a rule of `scope` is judged on in `result`: the whole run (`total`), a target, or a
/// flow's iterations in a target's shape; `None` when `result` has no such target or flow.
pub(crate) fn scoped<'a>(
    scope: &RuleScope,
    result: &'a RunResult,
) -> Option<Cow<'a, TargetResult>> {
    match scope {
        RuleScope::Total => Some(Cow::Borrowed(&result.total)),
        RuleScope::Target(name) => result
            .targets
            .iter()
            .find(|t| &t.name == name)
            .map(Cow::Borrowed),
        RuleScope::Flow(name) => result
            .flows
            .iter()
            .find(|f| &f.name == name)
            .map(|f| Cow::Owned(f.as_target())),
        RuleScope::Scenario(name) => result
            .scenarios
            .iter()
            .find(|s| &s.name == name)
            .map(|s| Cow::Borrowed(&s.total)),
    }
}
