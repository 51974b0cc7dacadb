// The words of the English -> French corpus (fra-eng-sentences.js builds sentences from them).
// Every French form is written out — no inflection rules here — so the corpus is exactly what
// this table says and a test can check it against grammar rules of its own.
//
// Agreement forms are [masculine singular, feminine singular, masculine plural, feminine plural].

const adjective = (en, fr) => ({ en, fr: typeof fr === 'string' ? [fr, fr, `${fr}s`, `${fr}s`] : fr });

/** Adjectives, all placed after the noun in French ("the red car" -> "la voiture rouge"). */
export const ADJECTIVES = {
  red: adjective('red', 'rouge'),
  black: adjective('black', ['noir', 'noire', 'noirs', 'noires']),
  white: adjective('white', ['blanc', 'blanche', 'blancs', 'blanches']),
  green: adjective('green', ['vert', 'verte', 'verts', 'vertes']),
  blue: adjective('blue', ['bleu', 'bleue', 'bleus', 'bleues']),
  grey: adjective('grey', ['gris', 'grise', 'gris', 'grises']),
  broken: adjective('broken', ['cassé', 'cassée', 'cassés', 'cassées']),
  heavy: adjective('heavy', ['lourd', 'lourde', 'lourds', 'lourdes']),
  fresh: adjective('fresh', ['frais', 'fraîche', 'frais', 'fraîches']),
  hot: adjective('hot', ['chaud', 'chaude', 'chauds', 'chaudes']),
  cold: adjective('cold', ['froid', 'froide', 'froids', 'froides']),
  good: adjective('good', ['bon', 'bonne', 'bons', 'bonnes']),
  tired: adjective('tired', ['fatigué', 'fatiguée', 'fatigués', 'fatiguées']),
  happy: adjective('happy', ['content', 'contente', 'contents', 'contentes']),
  ready: adjective('ready', ['prêt', 'prête', 'prêts', 'prêtes']),
  busy: adjective('busy', ['occupé', 'occupée', 'occupés', 'occupées']),
  tall: adjective('tall', ['grand', 'grande', 'grands', 'grandes']),
  small: adjective('small', ['petit', 'petite', 'petits', 'petites']),
  sick: adjective('sick', 'malade'),
  calm: adjective('calm', 'calme'),
  sad: adjective('sad', 'triste'),
  young: adjective('young', 'jeune'),
};

// Which adjectives go with which kind of noun: `attributive` after a noun ("the tired girl"),
// `predicative` after être ("the girl is tall"). "tall", "small" and "young" are predicative
// only: before a noun French puts them first ("le petit chien"), which this corpus avoids.
const A = ADJECTIVES;
export const ADJECTIVES_BY_KIND = {
  person: {
    attributive: [A.tired, A.sick, A.calm, A.sad, A.busy, A.happy],
    predicative: [A.tired, A.sick, A.calm, A.sad, A.busy, A.happy, A.ready, A.tall, A.small, A.young],
  },
  animal: { attributive: [A.black, A.white, A.grey, A.sick], predicative: [A.black, A.white, A.grey, A.sick, A.calm, A.small] },
  thing: {
    attributive: [A.red, A.black, A.white, A.green, A.blue, A.grey, A.broken, A.heavy],
    predicative: [A.red, A.black, A.white, A.green, A.blue, A.grey, A.broken, A.heavy],
  },
  food: { attributive: [A.fresh, A.hot, A.cold, A.green, A.red], predicative: [A.fresh, A.hot, A.cold, A.good] },
};

// en: [singular, plural]; fr: [singular, plural]; gender 'm' | 'f'.
const noun = (kind, en, fr, gender) => ({ kind, en, fr, gender });

export const NOUNS = [
  noun('person', ['boy', 'boys'], ['garçon', 'garçons'], 'm'),
  noun('person', ['girl', 'girls'], ['fille', 'filles'], 'f'),
  noun('person', ['man', 'men'], ['homme', 'hommes'], 'm'),
  noun('person', ['woman', 'women'], ['femme', 'femmes'], 'f'),
  noun('person', ['child', 'children'], ['enfant', 'enfants'], 'm'),
  noun('animal', ['dog', 'dogs'], ['chien', 'chiens'], 'm'),
  noun('animal', ['cat', 'cats'], ['chat', 'chats'], 'm'),
  noun('animal', ['horse', 'horses'], ['cheval', 'chevaux'], 'm'),
  noun('animal', ['bird', 'birds'], ['oiseau', 'oiseaux'], 'm'),
  noun('animal', ['cow', 'cows'], ['vache', 'vaches'], 'f'),
  noun('animal', ['mouse', 'mice'], ['souris', 'souris'], 'f'),
  noun('thing', ['car', 'cars'], ['voiture', 'voitures'], 'f'),
  noun('thing', ['house', 'houses'], ['maison', 'maisons'], 'f'),
  noun('thing', ['book', 'books'], ['livre', 'livres'], 'm'),
  noun('thing', ['bike', 'bikes'], ['vélo', 'vélos'], 'm'),
  noun('thing', ['bag', 'bags'], ['sac', 'sacs'], 'm'),
  noun('thing', ['coat', 'coats'], ['manteau', 'manteaux'], 'm'),
  noun('thing', ['shirt', 'shirts'], ['chemise', 'chemises'], 'f'),
  noun('thing', ['door', 'doors'], ['porte', 'portes'], 'f'),
  noun('thing', ['key', 'keys'], ['clé', 'clés'], 'f'),
  noun('thing', ['chair', 'chairs'], ['chaise', 'chaises'], 'f'),
  noun('thing', ['boat', 'boats'], ['bateau', 'bateaux'], 'm'),
  noun('thing', ['umbrella', 'umbrellas'], ['parapluie', 'parapluies'], 'm'),
  noun('thing', ['plate', 'plates'], ['assiette', 'assiettes'], 'f'),
  noun('food', ['apple', 'apples'], ['pomme', 'pommes'], 'f'),
  noun('food', ['cake', 'cakes'], ['gâteau', 'gâteaux'], 'm'),
  noun('food', ['egg', 'eggs'], ['œuf', 'œufs'], 'm'),
  noun('food', ['banana', 'bananas'], ['banane', 'bananes'], 'f'),
  noun('food', ['tomato', 'tomatoes'], ['tomate', 'tomates'], 'f'),
  noun('food', ['soup', 'soups'], ['soupe', 'soupes'], 'f'),
];

/**
 * Subject pronouns. `person` indexes the conjugation tables (0 je, 1 tu, 2 il/elle, 3 nous,
 * 4 ils). English "you" is tu and "they" is ils, and i/you/we take masculine agreement, so each
 * English sentence has one translation. `agree` indexes the adjective forms; `home` is the
 * "chez ..." pronoun; `be`: English [full, contracted].
 */
export const PRONOUNS = [
  { en: 'i', fr: 'je', person: 0, agree: 0, home: 'moi', be: ['i am', "i'm"], beNot: ['i am not', "i'm not"] },
  { en: 'you', fr: 'tu', person: 1, agree: 0, home: 'toi', be: ['you are', "you're"], beNot: ['you are not', "you aren't", "you're not"] },
  { en: 'he', fr: 'il', person: 2, agree: 0, home: 'lui', be: ['he is', "he's"], beNot: ['he is not', "he isn't", "he's not"] },
  { en: 'she', fr: 'elle', person: 2, agree: 1, home: 'elle', be: ['she is', "she's"], beNot: ['she is not', "she isn't", "she's not"] },
  { en: 'we', fr: 'nous', person: 3, agree: 2, home: 'nous', be: ['we are', "we're"], beNot: ['we are not', "we aren't", "we're not"] },
  { en: 'they', fr: 'ils', person: 4, agree: 2, home: 'eux', be: ['they are', "they're"], beNot: ['they are not', "they aren't", "they're not"] },
];

/** The "chez ..." pronoun for a noun subject, by its agreement index. */
export const HOME_BY_AGREE = ['lui', 'elle', 'eux', 'elles'];

// Present tense [je, tu, il/elle, nous, ils/elles]; en: [base, third person singular].
const verb = (en, fr, kinds, articles) => ({ en, fr, kinds, articles });
const ALL = ['person', 'animal', 'thing', 'food'];

/**
 * Transitive verbs with the kinds of object they take and the English articles they take:
 * 'the', 'a' (a/an) and 'plural' (a bare plural: "i see cars" -> "je vois des voitures").
 * With "like" a bare plural is generic and French uses the definite article ("i like apples"
 * -> "j'aime les pommes"), so "like" takes 'the' and 'generic'.
 */
export const VERBS = [
  verb(['have', 'has'], ['ai', 'as', 'a', 'avons', 'ont'], ['animal', 'thing', 'food'], ['the', 'a', 'plural']),
  verb(['see', 'sees'], ['vois', 'vois', 'voit', 'voyons', 'voient'], ALL, ['the', 'a', 'plural']),
  verb(['want', 'wants'], ['veux', 'veux', 'veut', 'voulons', 'veulent'], ['animal', 'thing', 'food'], ['the', 'a', 'plural']),
  verb(['like', 'likes'], ['aime', 'aimes', 'aime', 'aimons', 'aiment'], ALL, ['the', 'generic']),
  verb(['eat', 'eats'], ['mange', 'manges', 'mange', 'mangeons', 'mangent'], ['food'], ['the', 'a', 'plural']),
  verb(['buy', 'buys'], ['achète', 'achètes', 'achète', 'achetons', 'achètent'], ['thing', 'food'], ['the', 'a', 'plural']),
  verb(['take', 'takes'], ['prends', 'prends', 'prend', 'prenons', 'prennent'], ['thing', 'food'], ['the', 'a', 'plural']),
  verb(['watch', 'watches'], ['regarde', 'regardes', 'regarde', 'regardons', 'regardent'], ALL, ['the', 'a', 'plural']),
];

/** être and aller, present tense [je, tu, il/elle, nous, ils/elles]. */
export const ETRE = ['suis', 'es', 'est', 'sommes', 'sont'];
export const ALLER = ['vais', 'vas', 'va', 'allons', 'vont'];
/** avoir, the passé composé's auxiliary. */
export const AVOIR = VERBS[0].fr;

/**
 * Past participles (passé composé with avoir): en [past, base after "didn't"]; `object`: how
 * often the verb takes an object (0: never, 1: always; "i found ." is not English).
 */
export const PAST = [
  { en: ['lost', 'lose'], fr: 'perdu', object: 0.5 },
  { en: ['won', 'win'], fr: 'gagné', object: 0 },
  { en: ['found', 'find'], fr: 'trouvé', object: 1 },
];

/** Places for "go to the ...": French article, with à + le = au, à + les = aux. */
export const PLACES = [
  { en: 'park', fr: 'parc', gender: 'm' },
  { en: 'market', fr: 'marché', gender: 'm' },
  { en: 'beach', fr: 'plage', gender: 'f' },
  { en: 'station', fr: 'gare', gender: 'f' },
  { en: 'school', fr: 'école', gender: 'f' },
  { en: 'hotel', fr: 'hôtel', gender: 'm' },
  { en: 'shops', fr: 'magasins', gender: 'm', plural: true },
];

/** Imperatives (tu form), d2l's "go ." -> "va !" among them. */
export const IMPERATIVES = [
  { en: 'go', fr: 'va' },
  { en: 'come', fr: 'viens' },
  { en: 'run', fr: 'cours' },
  { en: 'stop', fr: 'arrête' },
  { en: 'wait', fr: 'attends' },
  { en: 'look', fr: 'regarde' },
];
