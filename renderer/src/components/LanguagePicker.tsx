import { useApp, useT } from '../context.tsx';
import { LANG_NAMES, type Lang } from '../i18n/messages.ts';

export function LanguagePicker() {
  const t = useT();
  const lang = useApp((s) => s.lang);
  const setLang = useApp((s) => s.setLang);
  return (
    <label className="lang">
      {t('language')}
      <select name="lang" value={lang} onChange={(e) => setLang(e.target.value as Lang)}>
        {(Object.keys(LANG_NAMES) as Lang[]).map((l) => (
          <option key={l} value={l}>
            {LANG_NAMES[l]}
          </option>
        ))}
      </select>
    </label>
  );
}
