// Section 2's explanation, HTML with TeX (typeset by ui/math.js): the estimator and its kernels
// above the plots, choosing σ and the classification mode below them.

export const TEXT = `
<p>Nadaraya-Watson regression predicts at a query $q$ by averaging the training labels with
kernel weights — attention whose keys are the training inputs $x_i$ and whose values are the
labels $y_i$:</p>
$$\\hat f(q) = \\sum_{i=1}^{n} \\alpha(q, x_i)\\, y_i,$$
$$\\alpha(q, x_i) = \\frac{K\\big((q - x_i)/\\sigma\\big)}{\\sum_{j} K\\big((q - x_j)/\\sigma\\big)} .$$
<p>Gaussian $K(u) = e^{-u^2/2}$, boxcar $K(u) = [\\,|u| \\le 1\\,]$, Epanechnikov
$K(u) = \\max(0, 1 - |u|)$, constant $K = 1$ (every query gets the mean). With the Gaussian kernel
the weights are a softmax, $\\alpha(q, x_i) = \\operatorname{softmax}_i\\big(-(q - x_i)^2 / 2\\sigma^2\\big)$.
The data: $y_i = 2\\sin x_i + x_i + \\varepsilon_i$, $\\varepsilon_i \\sim \\mathcal N(0, 1)$, for
40 points drawn uniformly on $[0, 5)$. <strong>Drag a point</strong> and the fit follows;
hover the heatmap (or the fit) to see one query's weights on the points.</p>`;

export const LOO_TEXT = `
<p>Choosing $\\sigma$: leave-one-out cross-validation predicts each label from the other
$n - 1$ points, $\\;\\mathrm{LOO}(\\sigma) = \\frac1n \\sum_i \\lVert y_i - \\hat f_{-i}(x_i) \\rVert^2$.
Too small a $\\sigma$ chases the noise (or, for boxcar, leaves points that no other point
reaches: those $\\sigma$ are off the curve); too large flattens $f$ toward the mean.
<strong>Classification</strong>: replace each $y_i$ by the one-hot vector of its class; the same
weights pool them into class probabilities $p(c \\mid q) = \\sum_i \\alpha(q, x_i)\\,[c_i = c]$.</p>`;
