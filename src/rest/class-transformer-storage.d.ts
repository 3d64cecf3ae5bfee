// class-transformer keeps its @Type metadata in this module; its types live under types/.
declare module 'class-transformer/cjs/storage.js' {
  export { defaultMetadataStorage } from 'class-transformer/types/storage.js';
}
