/** One line of a chart (LineChart): what it counts, its colour, and its count at each of the chart's times. */
export interface ChartLine {
  label: string
  colour: string
  counts: number[]
}
