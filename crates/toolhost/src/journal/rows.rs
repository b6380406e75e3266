//! How every store reads a row it found, decided once: what a claim of an existing key
//! answers, and the approval JSON rows keep.

use serde_json::Value;

use super::{denied_outcome, interrupted_outcome, ClaimAnswer, Decision, RowState, StoredApproval, StoredOutcome, Verdict};

/// The approval of a row as stored: the request and, once answered, the answer.
pub fn approval_json(approval_id: &str, requested_at: f64, expires_at: Option<f64>) -> Value {
    let mut o = serde_json::json!({ "approvalId": approval_id, "requestedAt": requested_at, "edited": false });
    if let Some(at) = expires_at {
        o["expiresAt"] = at.into();
    }
    o
}

/// The stored approval with a decision written into it; `row_args` are the arguments the
/// call waits with (JSON text): arguments given back unchanged are not an edit.
pub fn decided_approval(stored: Option<&Value>, decision: &Decision, row_args: &str) -> Value {
    let mut o = stored.cloned().unwrap_or_else(|| serde_json::json!({}));
    o["decidedAt"] = decision.now_ms.into();
    if let Some(by) = &decision.by {
        o["by"] = by.clone().into();
    }
    match &decision.verdict {
        Verdict::Approve { args } => {
            o["decision"] = "approved".into();
            o["edited"] = args.as_deref().is_some_and(|text| !crate::arguments::same_arguments(text, row_args)).into();
        }
        Verdict::Deny { reason } => {
            o["decision"] = "denied".into();
            o["reason"] = reason.clone().into();
        }
    }
    o
}

/// Whether a decision comes after the approval's deadline: an approval then finds no
/// call waiting for it (whichever process asked, and whether it still lives: only its
/// timer or recovery enforced the deadline before, so a late approval of a dead process's
/// call ran it, or was overwritten by recovery's denial). A denial is still taken.
pub fn too_late(row: &RowState, decision: &Decision) -> bool {
    matches!(decision.verdict, Verdict::Approve { .. }) && row.expires_at().is_some_and(|at| at <= decision.now_ms)
}

pub fn stored_approval(r: &RowState) -> StoredApproval {
    let a = r.approval.as_ref();
    StoredApproval {
        row: r.row.clone(),
        approval_id: r.approval_id.clone().unwrap_or_default(),
        execution_id: r.execution_id.clone(),
        tool_call_id: r.tool_call_id.clone(),
        tool: r.tool.clone(),
        args: r.args.clone(),
        requested_at: a.and_then(|a| a.get("requestedAt")).and_then(Value::as_f64).unwrap_or(0.0),
        expires_at: r.expires_at(),
        owner: r.owner.clone(),
        fence: r.fence,
    }
}

/// What a claim of an existing row answers, and the write it needs, decided the same way
/// by every store.
pub enum Existing {
    Answer(ClaimAnswer),
    /// Take the expired row over (fence + 1) and answer `Claimed`.
    TakeOver,
    /// End the expired row with this outcome (fence + 1) and answer `Ended` with it and
    /// the recovery's action (`interrupted`, `expired`).
    End(Box<StoredOutcome>, &'static str),
}

pub fn existing(row: &RowState, now: i64) -> Existing {
    if row.state == "done" {
        return match &row.outcome {
            Some(o) => Existing::Answer(ClaimAnswer::Finished(Box::new(o.clone()))),
            None => Existing::Answer(ClaimAnswer::InFlight),
        };
    }
    if row.lease_until >= now {
        return Existing::Answer(ClaimAnswer::InFlight);
    }
    match row.state.as_str() {
        "running" if !row.effect.may_run_again() => Existing::End(Box::new(interrupted_outcome(&row.tool, &row.execution_id, now as f64)), "interrupted"),
        "awaiting" if row.expires_at().is_some_and(|at| at <= now as f64) => {
            let approval = decided_approval(row.approval.as_ref(), &Decision {
                approval_id: row.approval_id.clone().unwrap_or_default(),
                verdict: Verdict::Deny { reason: "nobody approved it in time".into() },
                by: None,
                now_ms: now as f64,
            }, &row.args);
            Existing::End(Box::new(denied_outcome(&row.tool, &row.execution_id, "nobody approved it in time", approval, now as f64)), "expired")
        }
        _ => Existing::TakeOver,
    }
}


#[cfg(test)]
mod approval_tests {
    use super::*;

    #[test]
    fn arguments_given_back_unchanged_are_not_an_edit() {
        let approve = |args: Option<&str>| Decision { approval_id: "a".into(), verdict: Verdict::Approve { args: args.map(str::to_string) }, by: None, now_ms: 1.0 };
        let waiting = r#"{"amount":500,"memo":"rent"}"#;
        let edited = |args| decided_approval(None, &approve(args), waiting)["edited"].clone();
        assert_eq!(edited(None), false);
        assert_eq!(edited(Some(r#"{ "memo": "rent", "amount": 500 }"#)), false, "the same value, keys in another order");
        assert_eq!(edited(Some(r#"{"amount":50,"memo":"rent"}"#)), true);
    }
}
