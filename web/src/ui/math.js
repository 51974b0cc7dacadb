// Typesets the TeX in an element with KaTeX: $…$ inline, $$…$$ displayed.
import renderMathInElement from 'katex/contrib/auto-render';
import 'katex/dist/katex.min.css';

const delimiters = [
  { left: '$$', right: '$$', display: true },
  { left: '$', right: '$', display: false },
];

export function typeset(element) {
  renderMathInElement(element, { delimiters, throwOnError: false, strict: 'ignore' });
  return element;
}

/** An element from an HTML string with TeX, typeset. */
export function prose(html, tag = 'div', className = 'prose') {
  const element = document.createElement(tag);
  element.className = className;
  element.innerHTML = html;
  return typeset(element);
}
