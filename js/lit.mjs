// toolhost/lit: two Lit elements over a ToolExecutionManager, for any page (Lit is an
// optional peer dependency; the main entry never loads this module).
//
//   <toolhost-approvals .manager=${manager}>  the calls waiting for approval: the tool,
//     its arguments, approve / deny / edit (js/approvals-element.mjs).
//   <toolhost-activity .manager=${manager} limit="20">  executions as they happen: tool,
//     status, attempts, duration, last error; the newest `limit` (js/activity-element.mjs).
//
// Both follow the manager's events, live in their own shadow root (so they work inside
// another component's), are reached and used by keyboard alone (native buttons and
// fields, visible focus, a live region), and are themed with CSS custom properties
// (`--toolhost-*`, js/element-theme.mjs) and `::part()`. Importing this module defines
// both tags (once: a second import, with hot reloading say, keeps the first).
import { ToolhostActivity } from './activity-element.mjs'
import { ToolhostApprovals } from './approvals-element.mjs'

if (!customElements.get('toolhost-approvals')) customElements.define('toolhost-approvals', ToolhostApprovals)
if (!customElements.get('toolhost-activity')) customElements.define('toolhost-activity', ToolhostActivity)

export { ToolhostActivity, ToolhostApprovals }
