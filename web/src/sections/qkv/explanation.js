// Section 1's explanation, HTML with TeX (typeset by ui/math.js).

export const TEXT = `
<p>A key-value store $D = \\{(k_1, v_1), \\dots, (k_m, v_m)\\}$ answers a query $q$ whose key it
holds with that key's value. Attention answers <em>every</em> query, by pooling all values with
weights that say how well each key matches:</p>
$$\\operatorname{Attention}(q, D) = \\sum_{i=1}^{m} \\alpha(q, k_i)\\, v_i,$$
$$\\alpha(q, k_i) = \\frac{\\exp\\!\\big(a(q, k_i)/T\\big)}{\\sum_j \\exp\\!\\big(a(q, k_j)/T\\big)}$$
<p>with the score $a(q, k) = -\\tfrac12 (q - k)^2$. The softmax makes the weights nonnegative and sum to 1, so the output is a <strong>convex
combination</strong> of the values. The temperature $T$ walks through the special cases: as
$T \\to 0$ one weight is 1 and the rest 0 — a <strong>database lookup</strong> of the nearest key;
as $T \\to \\infty$ all weights equal $1/m$ — <strong>average pooling</strong>. This
$\\alpha$ is the Gaussian kernel with $\\sigma^2 = T$, so the page computes it with the package's
<code>kernelRegression</code>: section 2 is the same soft lookup.</p>`;
