import type { Measured } from './stats.js'

/** A target the issue sets, checked against a figure measured in the same run. */
export interface Check {
  what: string
  value: number
  /** e.g. '≥ 0.9' */
  target: string
  pass: boolean
}

/** One bar group in the chart: throughput and/or p99 of one thing measured. */
export interface ChartPoint {
  label: string
  rps?: Measured
  p99Ms?: Measured
}

export interface ScenarioReport {
  name: string
  title: string
  /** The command that produced it. */
  command: string
  /** What was measured, how, in a sentence or two. */
  method: string
  table: { headers: string[]; rows: string[][] }
  checks: Check[]
  chart: ChartPoint[]
  notes?: string[]
  /** Markdown written as is after the notes (e.g. a table of estimates). */
  markdown?: string[]
  /** One line for the end-of-run summary. */
  summary: string
}
