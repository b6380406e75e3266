// Generated from js/lit.d.ts by scripts/esm-declarations.mjs: do not edit.
// `node scripts/esm-declarations.mjs` writes it again.

// The types of toolhost/lit (js/lit.mjs): two Lit elements over a ToolExecutionManager.
// lit is an optional peer dependency: these types need it installed.

import type { LitElement } from 'lit'
import type { ToolExecutionManager } from './index.js'

/** The detail of `toolhost-approval-decided`, fired after `<toolhost-approvals>` sent a decision. */
export interface ApprovalDecidedDetail {
  approvalId: string
  executionId: string
  toolName: string
  decision: 'approved' | 'denied'
  /** The edited arguments sent with the approval; `undefined` when they were not edited. */
  args: unknown
  edited: boolean
}

/**
 * `<toolhost-approvals .manager=${manager}>`: the calls waiting for approval, each with
 * approve, deny and edit-arguments controls. Edited arguments are parsed as JSON and
 * validated against the tool's input schema (`registry.validate`, or the session's)
 * before `manager.approve(id, { args })` is called; a refusal is shown in the element
 * and nothing is sent.
 *
 * Parts: `container`, `title`, `count`, `empty`, `list`, `approval`, `approval-header`,
 * `tool`, `call-id`, `expires`, `args`, `editor-label`, `editor`, `error`, `actions`,
 * `button` (each button), `approve`, `deny`, `edit`.
 */
export declare class ToolhostApprovals extends LitElement {
  manager: ToolExecutionManager | undefined
  /** Who decides, recorded as `by` of approve() / deny(). */
  by: string | undefined
  /** The reason deny() records (attribute `deny-reason`). @default 'The user denied this call.' */
  denyReason: string
}

/**
 * `<toolhost-activity .manager=${manager} limit="20">`: executions as they happen,
 * newest first (tool, status, attempts, duration, last error), at most `limit`,
 * starting from those the manager has (`getExecutions()`) when it is connected.
 *
 * Parts: `container`, `title`, `count`, `empty`, `scroll`, `table`, `header-row`,
 * `execution` (the `<tbody>` of one execution, with `data-status`), `row` (its row,
 * also named by its status: `succeeded`, `failed`, ...), `tool`, `status`, `badge`
 * (also named by its status), `progress`, `attempts`, `duration`, `error-row` and
 * `error` (the last error, on a row of its own).
 */
export declare class ToolhostActivity extends LitElement {
  manager: ToolExecutionManager | undefined
  /** The most executions shown. @default 20 */
  limit: number
}

declare global {
  interface HTMLElementTagNameMap {
    'toolhost-approvals': ToolhostApprovals
    'toolhost-activity': ToolhostActivity
  }
  interface HTMLElementEventMap {
    'toolhost-approval-decided': CustomEvent<ApprovalDecidedDetail>
  }
}
