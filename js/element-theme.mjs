// The look <toolhost-approvals> and <toolhost-activity> share (toolhost/lit): every
// colour and size is a `--toolhost-*` custom property with a default.
import { css } from 'lit'

/** The look both elements share; every colour and size is a custom property. */
export const theme = css`
  :host {
    display: block;
    /* Shrinks to its grid or flex track; wide content scrolls inside. */
    min-width: 0;
    box-sizing: border-box;
    font-family: var(--toolhost-font-family, system-ui, sans-serif);
    font-size: var(--toolhost-font-size, 14px);
    line-height: 1.45;
    color: var(--toolhost-color, #0f172a);
    background: var(--toolhost-background, #ffffff);
    border: 1px solid var(--toolhost-border-color, #e2e8f0);
    border-radius: var(--toolhost-radius, 10px);
    padding: var(--toolhost-padding, 14px 16px);
  }
  :host([hidden]) {
    display: none;
  }
  *, *::before, *::after {
    box-sizing: inherit;
  }
  h2 {
    margin: 0 0 10px;
    font-size: 1em;
    font-weight: 650;
    display: flex;
    align-items: center;
    gap: 8px;
  }
  .count {
    font-weight: 600;
    font-size: 0.8em;
    min-width: 1.7em;
    padding: 1px 7px;
    border-radius: 999px;
    text-align: center;
    background: var(--toolhost-muted-background, #f1f5f9);
    color: var(--toolhost-muted-color, #64748b);
  }
  .empty {
    margin: 0;
    color: var(--toolhost-muted-color, #64748b);
  }
  .mono, pre, textarea {
    font-family: var(--toolhost-mono-font-family, ui-monospace, SFMono-Regular, Menlo, Consolas, monospace);
    font-size: 0.9em;
  }
  :focus-visible {
    outline: 2px solid var(--toolhost-focus-color, #2563eb);
    outline-offset: 2px;
  }
  .visually-hidden {
    position: absolute;
    width: 1px;
    height: 1px;
    margin: -1px;
    padding: 0;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
    border: 0;
  }
`
