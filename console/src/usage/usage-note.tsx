/** Why usage is not shown (usageUnavailable's words), in place of a chart or the overview's tables. */
export function UsageNote({ text }: { text: string }) {
  return (
    <p class="warning" data-testid="usage-unavailable">
      {text}
    </p>
  )
}
