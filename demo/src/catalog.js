/**
 * The catalogue: what the shop sells, at what price (VAT included, in cents), and in which tax
 * category (see tax.js).
 */

export const PRODUCTS = [
  { sku: 'TEA-EARL', name: 'Earl Grey tea, 100 g', priceCents: 450, category: 'food' },
  { sku: 'TEA-MINT', name: 'Mint tea, 100 g', priceCents: 390, category: 'food' },
  { sku: 'TEA-SENCHA', name: 'Sencha, 100 g', priceCents: 720, category: 'food' },
  { sku: 'MUG-BLUE', name: 'Blue mug', priceCents: 1200, category: 'standard' },
  { sku: 'POT-IRON', name: 'Cast-iron teapot', priceCents: 4800, category: 'standard' },
  { sku: 'BOOK-TEA', name: 'The Book of Tea', priceCents: 1495, category: 'books' },
  { sku: 'CARD-GIFT', name: 'Gift card', priceCents: 2500, category: 'exempt' },
];

/** The product with this SKU; an unknown SKU is an error, not undefined. */
export function findProduct(sku) {
  const product = PRODUCTS.find((p) => p.sku === sku);
  if (!product) throw new Error(`unknown product: ${sku}`);
  return product;
}

/** Products whose name holds every word of `query`, in any case: 'tea 100' finds the teas. */
export function searchProducts(query) {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  return PRODUCTS.filter((p) => words.every((word) => p.name.toLowerCase().includes(word)));
}
