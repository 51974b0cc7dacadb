// One phrase for a summary line: a measured ratio against its goal, and whether it is met.
export function goal(ratio, relation, target) {
  const met = relation === '≤' ? ratio <= target : ratio >= target;
  return `${ratio.toFixed(2)}× (goal ${relation} ${target}: ${met ? 'met' : 'NOT met'})`;
}
