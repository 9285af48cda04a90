// The round-trip corpus measured through md_edit (DOM text before and after), as fidelity.test.ts measures md_block.
process.env.CMS_FIDELITY_EDITOR = 'md_edit'
await import('./fidelity.test.js')
