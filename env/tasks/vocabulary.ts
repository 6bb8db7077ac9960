/**
 * The words the generator draws with: table themes (what a row is, its columns, how a question
 * talks about them) and the label pools charts use. Pure data; no randomness and no layout here.
 * Labels are plain Latin-1 text so the glyph table in fonts/ covers every character.
 */

export interface NumberColumnSpec {
  name: string;
  /** Short header for tight layouts (tiny canvases); defaults to `name`. */
  short?: string;
  kind: 'number';
  /** How a question names the quantity: "wins", "points", "population". */
  noun: string;
  min: number;
  max: number;
  decimals: 0 | 1 | 2;
}

export interface CategoryColumnSpec {
  name: string;
  short?: string;
  kind: 'category';
  values: readonly string[];
  /** How a question restricts to one value: "from {v}", "in the {v} team". */
  filter: string;
}

export type ColumnSpec = NumberColumnSpec | CategoryColumnSpec;

export type KeyPool = 'person' | 'city' | 'product' | 'club' | 'country' | 'company';

export interface TableTheme {
  id: string;
  title: string;
  keyColumn: string;
  /** Header of the key column on tight layouts. */
  keyShort: string;
  keyPool: KeyPool;
  entity: { one: string; many: string };
  columns: readonly ColumnSpec[];
}

const COUNTRIES_SHORT = ['Belgium', 'France', 'Italy', 'Spain', 'Denmark', 'Norway', 'Poland', 'Peru'] as const;

export const TABLE_THEMES: readonly TableTheme[] = [
  {
    id: 'cycling', title: 'Season results', keyColumn: 'Rider', keyShort: 'Rider', keyPool: 'person', entity: { one: 'rider', many: 'riders' },
    columns: [
      { name: 'Country', kind: 'category', values: COUNTRIES_SHORT, filter: 'are from {v}' },
      { name: 'Team', kind: 'category', values: ['Astra', 'Bora', 'Cofi', 'Delta', 'Eolo'], filter: 'ride for team {v}' },
      { name: 'Role', kind: 'category', values: ['Sprinter', 'Climber', 'Leader', 'Rouleur'], filter: 'have the role {v}' },
      { name: 'Wins', kind: 'number', noun: 'wins', min: 0, max: 15, decimals: 0 },
      { name: 'Podiums', kind: 'number', noun: 'podiums', min: 0, max: 30, decimals: 0 },
      { name: 'Points', short: 'Pts', kind: 'number', noun: 'points', min: 40, max: 3200, decimals: 0 },
      { name: 'Age', kind: 'number', noun: 'age', min: 19, max: 38, decimals: 0 },
      { name: 'Race days', short: 'Days', kind: 'number', noun: 'race days', min: 20, max: 95, decimals: 0 },
      { name: 'Top 10s', kind: 'number', noun: 'top-10 finishes', min: 0, max: 40, decimals: 0 },
      { name: 'Km raced', short: 'Km', kind: 'number', noun: 'kilometres raced', min: 3000, max: 16000, decimals: 0 },
      { name: 'Weight (kg)', short: 'Kg', kind: 'number', noun: 'weight', min: 55, max: 85, decimals: 1 },
      { name: 'Avg speed', short: 'Speed', kind: 'number', noun: 'average speed', min: 36, max: 46, decimals: 1 },
      { name: 'Abandons', short: 'DNF', kind: 'number', noun: 'abandons', min: 0, max: 6, decimals: 0 },
    ],
  },
  {
    id: 'cities', title: 'City statistics', keyColumn: 'City', keyShort: 'City', keyPool: 'city', entity: { one: 'city', many: 'cities' },
    columns: [
      { name: 'Country', kind: 'category', values: COUNTRIES_SHORT, filter: 'are in {v}' },
      { name: 'Climate', kind: 'category', values: ['Oceanic', 'Alpine', 'Arid', 'Humid'], filter: 'have a {v} climate' },
      { name: 'Coastal', kind: 'category', values: ['Yes', 'No'], filter: 'have {v} in the Coastal column' },
      { name: 'Population (k)', short: 'Pop.', kind: 'number', noun: 'population (in thousands)', min: 40, max: 4200, decimals: 0 },
      { name: 'Area (km²)', short: 'Area', kind: 'number', noun: 'area', min: 30, max: 1600, decimals: 0 },
      { name: 'Rainfall (mm)', short: 'Rain', kind: 'number', noun: 'rainfall', min: 200, max: 1800, decimals: 0 },
      { name: 'Avg temp (°C)', short: 'Temp', kind: 'number', noun: 'average temperature', min: 4, max: 24, decimals: 1 },
      { name: 'Museums', kind: 'number', noun: 'museums', min: 1, max: 90, decimals: 0 },
      { name: 'Parks', kind: 'number', noun: 'parks', min: 3, max: 140, decimals: 0 },
      { name: 'Hotels', kind: 'number', noun: 'hotels', min: 10, max: 900, decimals: 0 },
      { name: 'Elevation (m)', short: 'Elev.', kind: 'number', noun: 'elevation', min: 0, max: 1400, decimals: 0 },
      { name: 'Unemployment (%)', short: 'Unemp.', kind: 'number', noun: 'unemployment rate', min: 2, max: 18, decimals: 1 },
      { name: 'Bus lines', short: 'Buses', kind: 'number', noun: 'bus lines', min: 4, max: 220, decimals: 0 },
    ],
  },
  {
    id: 'store', title: 'Product sales', keyColumn: 'Product', keyShort: 'Item', keyPool: 'product', entity: { one: 'product', many: 'products' },
    columns: [
      { name: 'Category', short: 'Cat.', kind: 'category', values: ['Kitchen', 'Garden', 'Office', 'Toys', 'Sports'], filter: 'are in the {v} category' },
      { name: 'Supplier', kind: 'category', values: ['Acme', 'Borel', 'Caspo', 'Dunmore'], filter: 'are supplied by {v}' },
      { name: 'Region', kind: 'category', values: ['North', 'South', 'East', 'West'], filter: 'sell in the {v} region' },
      { name: 'Price ($)', short: 'Price', kind: 'number', noun: 'price', min: 2, max: 400, decimals: 2 },
      { name: 'Units sold', short: 'Units', kind: 'number', noun: 'units sold', min: 10, max: 9000, decimals: 0 },
      { name: 'Stock', kind: 'number', noun: 'stock', min: 0, max: 1500, decimals: 0 },
      { name: 'Returns', kind: 'number', noun: 'returns', min: 0, max: 120, decimals: 0 },
      { name: 'Rating', kind: 'number', noun: 'rating', min: 1, max: 5, decimals: 1 },
      { name: 'Reviews', kind: 'number', noun: 'reviews', min: 0, max: 2500, decimals: 0 },
      { name: 'Weight (g)', short: 'Grams', kind: 'number', noun: 'weight', min: 50, max: 8000, decimals: 0 },
      { name: 'Discount (%)', short: 'Disc.', kind: 'number', noun: 'discount', min: 0, max: 45, decimals: 0 },
      { name: 'Shelf days', short: 'Shelf', kind: 'number', noun: 'shelf days', min: 1, max: 365, decimals: 0 },
      { name: 'Margin (%)', short: 'Margin', kind: 'number', noun: 'margin', min: 3, max: 60, decimals: 1 },
    ],
  },
  {
    id: 'league', title: 'League table', keyColumn: 'Club', keyShort: 'Club', keyPool: 'club', entity: { one: 'club', many: 'clubs' },
    columns: [
      { name: 'Division', short: 'Div.', kind: 'category', values: ['North', 'South', 'Central'], filter: 'play in the {v} division' },
      { name: 'Coach', kind: 'category', values: ['Ahn', 'Berg', 'Costa', 'Dietz', 'Evans'], filter: 'are coached by {v}' },
      { name: 'Kit', kind: 'category', values: ['Red', 'Blue', 'Green', 'White', 'Black'], filter: 'wear a {v} kit' },
      { name: 'Played', short: 'P', kind: 'number', noun: 'games played', min: 20, max: 38, decimals: 0 },
      { name: 'Won', short: 'W', kind: 'number', noun: 'wins', min: 0, max: 28, decimals: 0 },
      { name: 'Drawn', short: 'D', kind: 'number', noun: 'draws', min: 0, max: 15, decimals: 0 },
      { name: 'Lost', short: 'L', kind: 'number', noun: 'losses', min: 0, max: 25, decimals: 0 },
      { name: 'Goals for', short: 'GF', kind: 'number', noun: 'goals scored', min: 15, max: 95, decimals: 0 },
      { name: 'Goals against', short: 'GA', kind: 'number', noun: 'goals conceded', min: 15, max: 90, decimals: 0 },
      { name: 'Points', short: 'Pts', kind: 'number', noun: 'points', min: 10, max: 90, decimals: 0 },
      { name: 'Attendance', short: 'Att.', kind: 'number', noun: 'average attendance', min: 1200, max: 68000, decimals: 0 },
      { name: 'Red cards', short: 'RC', kind: 'number', noun: 'red cards', min: 0, max: 9, decimals: 0 },
      { name: 'Possession (%)', short: 'Poss.', kind: 'number', noun: 'possession', min: 38, max: 64, decimals: 1 },
    ],
  },
  {
    id: 'staff', title: 'Staff overview', keyColumn: 'Employee', keyShort: 'Name', keyPool: 'person', entity: { one: 'employee', many: 'employees' },
    columns: [
      { name: 'Department', short: 'Dept.', kind: 'category', values: ['Sales', 'Finance', 'Legal', 'IT', 'Support'], filter: 'work in {v}' },
      { name: 'Office', kind: 'category', values: ['Oslo', 'Lyon', 'Porto', 'Graz', 'Cork'], filter: 'work in the {v} office' },
      { name: 'Contract', kind: 'category', values: ['Full', 'Part', 'Temp'], filter: 'have a {v} contract' },
      { name: 'Salary ($k)', short: 'Salary', kind: 'number', noun: 'salary', min: 28, max: 190, decimals: 0 },
      { name: 'Years', kind: 'number', noun: 'years of service', min: 0, max: 35, decimals: 0 },
      { name: 'Projects', kind: 'number', noun: 'projects', min: 0, max: 24, decimals: 0 },
      { name: 'Score', kind: 'number', noun: 'performance score', min: 1, max: 10, decimals: 1 },
      { name: 'Sick days', short: 'Sick', kind: 'number', noun: 'sick days', min: 0, max: 20, decimals: 0 },
      { name: 'Overtime (h)', short: 'OT', kind: 'number', noun: 'overtime hours', min: 0, max: 300, decimals: 0 },
      { name: 'Trainings', short: 'Train', kind: 'number', noun: 'trainings', min: 0, max: 12, decimals: 0 },
      { name: 'Bonus ($)', short: 'Bonus', kind: 'number', noun: 'bonus', min: 0, max: 9000, decimals: 0 },
      { name: 'Age', kind: 'number', noun: 'age', min: 21, max: 66, decimals: 0 },
      { name: 'Leave days', short: 'Leave', kind: 'number', noun: 'leave days', min: 10, max: 35, decimals: 0 },
    ],
  },
];

/** First names and family names for people; short ones first so tiny layouts can filter. */
export const FIRST_NAMES = [
  'Ana', 'Bo', 'Eva', 'Ian', 'Kai', 'Lea', 'Max', 'Mia', 'Noa', 'Ole', 'Tom', 'Zoe', 'Ada', 'Eli', 'Ivo', 'Jan',
  'Lars', 'Marc', 'Nina', 'Omar', 'Paul', 'Rosa', 'Sara', 'Tim', 'Vera', 'Wout', 'Yara', 'Hugo', 'Iris', 'Jonas',
  'Elena', 'Felix', 'Greta', 'Hanna', 'Julia', 'Lucas', 'Marta', 'Nadia', 'Oscar', 'Pieter', 'Remco', 'Sofia',
  'Tadej', 'Viktor', 'Wilma', 'Primoz', 'Arnaud', 'Mathieu', 'Jasper', 'Caroline', 'Benedikt', 'Florence',
];

export const LAST_NAMES = [
  'Berg', 'Cruz', 'Diaz', 'Holm', 'Kuss', 'Lund', 'Moss', 'Roy', 'Sand', 'Vos', 'Yates', 'Adams', 'Blanc', 'Costa',
  'Dumont', 'Evans', 'Fischer', 'Garcia', 'Hansen', 'Ivanov', 'Jensen', 'Kowalski', 'Lambert', 'Moreau', 'Nielsen',
  'Olsen', 'Peeters', 'Quintana', 'Rossi', 'Schmidt', 'Teunissen', 'Urbano', 'Vermeulen', 'Wagner', 'Zimmermann',
  'Van Aert', 'De Lie', 'Pogacar', 'Vingegaard', 'Bernal', 'Mohoric', 'Pedersen', 'Philipsen', 'Evenepoel',
];

export const CITIES = [
  'Oslo', 'Lyon', 'Nice', 'Graz', 'Cork', 'Bern', 'Riga', 'Bari', 'Pisa', 'Lima', 'Kyiv', 'Bonn', 'Ghent', 'Porto',
  'Turin', 'Malmo', 'Aarhus', 'Bergen', 'Bilbao', 'Bremen', 'Dublin', 'Geneva', 'Krakow', 'Leeds', 'Lille', 'Lisbon',
  'Madrid', 'Munich', 'Naples', 'Nantes', 'Seville', 'Tallinn', 'Utrecht', 'Valencia', 'Vienna', 'Warsaw', 'Zagreb',
  'Antwerp', 'Bordeaux', 'Cologne', 'Dresden', 'Florence', 'Glasgow', 'Hamburg', 'Helsinki', 'Leipzig',
  'Ljubljana', 'Marseille', 'Rotterdam', 'Salzburg', 'Stuttgart', 'Barcelona', 'Edinburgh', 'Frankfurt',
  'Gothenburg', 'Copenhagen', 'Strasbourg', 'Bratislava', 'Luxembourg', 'Manchester', 'Birmingham',
];

export const PRODUCT_ADJECTIVES = [
  'Red', 'Blue', 'Mini', 'Solid', 'Steel', 'Smart', 'Quick', 'Clever', 'Bamboo', 'Classic', 'Compact', 'Deluxe',
  'Foldable', 'Portable', 'Wireless', 'Ceramic', 'Magnetic', 'Vintage', 'Heavy-duty', 'Eco',
];

export const PRODUCT_NOUNS = [
  'Mug', 'Lamp', 'Kite', 'Pen', 'Fan', 'Kettle', 'Stool', 'Blender', 'Shovel', 'Stapler', 'Puzzle', 'Racket',
  'Helmet', 'Ladder', 'Toaster', 'Backpack', 'Notebook', 'Scissors', 'Hammock', 'Thermos', 'Cushion', 'Skillet',
  'Sprinkler', 'Yoga Mat', 'Desk Organizer', 'Water Bottle',
];

export const CLUB_SUFFIXES = ['FC', 'United', 'City', 'Rovers', 'Athletic', 'Wanderers', 'Rangers', 'Albion', 'Town'];

export const COUNTRIES = [
  'Chad', 'Cuba', 'Fiji', 'Iran', 'Iraq', 'Laos', 'Mali', 'Oman', 'Peru', 'Togo', 'Chile', 'China', 'Egypt',
  'Ghana', 'India', 'Italy', 'Japan', 'Kenya', 'Nepal', 'Spain', 'Brazil', 'Canada', 'France', 'Greece', 'Israel',
  'Mexico', 'Norway', 'Poland', 'Sweden', 'Turkey', 'Austria', 'Belgium', 'Denmark', 'Finland', 'Germany',
  'Hungary', 'Ireland', 'Morocco', 'Nigeria', 'Portugal', 'Colombia', 'Ethiopia', 'Malaysia', 'Thailand',
  'Argentina', 'Australia', 'Indonesia', 'Singapore', 'Switzerland', 'Netherlands', 'New Zealand',
  'South Africa', 'South Korea', 'United Kingdom', 'United States', 'Czech Republic',
];

export const COMPANIES = [
  'Acme', 'Volta', 'Nimbus', 'Orbit', 'Quanta', 'Helix', 'Zenith', 'Lumen', 'Vertex', 'Cobalt', 'Aurora', 'Pinnacle',
  'Meridian', 'Northwind', 'Silverline', 'Bluewater', 'Ironbridge', 'Greenfield', 'Brightpath', 'Stonegate',
];

export const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

/** What a chart measures: its axis title, the noun a question uses, and a plausible range. */
export interface ChartMeasure {
  axis: string;
  noun: string;
  min: number;
  max: number;
  decimals: 0 | 1;
}

export const CHART_MEASURES: readonly ChartMeasure[] = [
  { axis: 'Revenue (million $)', noun: 'revenue', min: 5, max: 480, decimals: 0 },
  { axis: 'Share of respondents (%)', noun: 'share of respondents', min: 2, max: 68, decimals: 0 },
  { axis: 'Visitors (thousands)', noun: 'number of visitors', min: 10, max: 950, decimals: 0 },
  { axis: 'Average price ($)', noun: 'average price', min: 1, max: 60, decimals: 1 },
  { axis: 'Growth rate (%)', noun: 'growth rate', min: 0.5, max: 14, decimals: 1 },
  { axis: 'Units sold', noun: 'units sold', min: 20, max: 900, decimals: 0 },
  { axis: 'Emissions (Mt)', noun: 'emissions', min: 3, max: 310, decimals: 0 },
  { axis: 'Satisfaction score', noun: 'satisfaction score', min: 2, max: 9.8, decimals: 1 },
];

/** Category pools for the chart's labelled axis, and how a question names one category. */
export interface CategoryPool {
  id: 'country' | 'year' | 'month' | 'company' | 'city' | 'product';
  axis: string;
  one: string;
  many: string;
}

export const CATEGORY_POOLS: readonly CategoryPool[] = [
  { id: 'country', axis: 'Country', one: 'country', many: 'countries' },
  { id: 'year', axis: 'Year', one: 'year', many: 'years' },
  { id: 'month', axis: 'Month', one: 'month', many: 'months' },
  { id: 'company', axis: 'Company', one: 'company', many: 'companies' },
  { id: 'city', axis: 'City', one: 'city', many: 'cities' },
  { id: 'product', axis: 'Product', one: 'product', many: 'products' },
];

/** Series names for grouped bars and multi-line charts. */
export const SERIES_SETS: readonly (readonly string[])[] = [
  ['Men', 'Women'],
  ['Online', 'In store', 'Phone', 'Partner'],
  ['2019', '2020', '2021', '2022'],
  ['North', 'South', 'East', 'West'],
  ['Urban', 'Rural', 'Suburban'],
  ['Budget', 'Actual', 'Forecast'],
  ['Product A', 'Product B', 'Product C', 'Product D'],
];

/**
 * Colour palettes (colour-blind-friendly). Bars pick one colour or cycle through a palette.
 * No reds: the tools draw and highlight in red, and a red bar would hide their marks.
 */
export const PALETTES: readonly (readonly string[])[] = [
  ['#4e79a7', '#f28e2b', '#59a14f', '#76b7b2', '#edc948', '#b07aa1', '#9c755f', '#bab0ac'],
  ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'],
  ['#0072b2', '#e69f00', '#009e73', '#cc79a7', '#56b4e9', '#f0e442', '#555555'],
  ['#2b6a99', '#5fa2ce', '#a3cce9', '#1170aa', '#fc7d0b', '#ffbc79', '#7b848f'],
];
