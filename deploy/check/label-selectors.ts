/** A Kubernetes label selector (matchLabels and matchExpressions, ANDed). */
export interface LabelSelector {
  matchLabels?: Record<string, string>
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>
}

/** Whether `labels` satisfy `selector`. An empty selector selects everything, as in Kubernetes. */
export function selects(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return false
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false
  }
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, key)
    const ok =
      operator === 'In'
        ? has && values.includes(labels[key]!)
        : operator === 'NotIn'
          ? !has || !values.includes(labels[key]!)
          : operator === 'Exists'
            ? has
            : operator === 'DoesNotExist'
              ? !has
              : false
    if (!ok) return false
  }
  return true
}

/** A Service's selector: a plain map of labels. */
export function selectsByMap(selector: Record<string, string> | undefined, labels: Record<string, string>): boolean {
  return selector !== undefined && selects({ matchLabels: selector }, labels)
}
