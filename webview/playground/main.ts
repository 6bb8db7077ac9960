import { startPanel } from '../shared/shell.js';
startPanel(async (_host, root) => { root.textContent = 'playground'; });
