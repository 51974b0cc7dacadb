// puppeteer's page.mouse and page.keyboard for WebKit's pages (webkit-page.js), over WebDriver
// actions (https://www.w3.org/TR/webdriver2/#actions): the pointer, its button and the keys stay
// as the last call left them, within the session, so that down(), move() and up() drag.

// WebDriver's codes for the keys that have names (its "Keyboard actions"); a character is its
// own code.
const KEYS = {
  ArrowLeft: '\uE012', ArrowUp: '\uE013', ArrowRight: '\uE014', ArrowDown: '\uE015', Enter: '\uE007',
  Tab: '\uE004', Escape: '\uE00C', Backspace: '\uE003', Home: '\uE011', End: '\uE010',
  PageUp: '\uE00E', PageDown: '\uE00F',
};

export class Mouse {
  #session;
  #x = 0;
  #y = 0;

  constructor(session) {
    this.#session = session;
  }

  #pointer(actions) {
    return this.#session.performActions([{ type: 'pointer', id: 'mouse', parameters: { pointerType: 'mouse' }, actions }]);
  }

  // Moves in `steps` equal steps from where the pointer is, as puppeteer does (the protocol takes
  // whole CSS pixels).
  move(x, y, { steps = 1 } = {}) {
    const from = [this.#x, this.#y];
    [this.#x, this.#y] = [x, y];
    return this.#pointer(Array.from({ length: steps }, (_, i) => ({
      type: 'pointerMove',
      origin: 'viewport',
      duration: 0,
      x: Math.round(from[0] + ((x - from[0]) * (i + 1)) / steps),
      y: Math.round(from[1] + ((y - from[1]) * (i + 1)) / steps),
    })));
  }

  down() { return this.#pointer([{ type: 'pointerDown', button: 0 }]); }
  up() { return this.#pointer([{ type: 'pointerUp', button: 0 }]); }
}

// puppeteer's page.keyboard.press: the key goes to the focused element.
export class Keyboard {
  #session;

  constructor(session) {
    this.#session = session;
  }

  press(key) {
    const value = KEYS[key] ?? key;
    if ([...value].length !== 1) throw new Error(`keyboard.press: no WebDriver code for ${key}`);
    return this.#session.performActions([{
      type: 'key', id: 'keyboard', actions: [{ type: 'keyDown', value }, { type: 'keyUp', value }],
    }]);
  }
}
