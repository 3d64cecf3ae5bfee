import { createPageType } from '../../common/pagination.js';
import { ContactImport } from './contact-import.entity.js';

export const ContactImportPage = createPageType(ContactImport, 'ContactImportPage');
